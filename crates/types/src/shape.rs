//! Helpers for tensor shapes.

/// The number of elements of `shape`; `None` if a dimension is negative or the
/// product overflows.
pub fn element_count(shape: &[i64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| {
        usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
    })
}

/// `[1,16]`, the way Triton writes shapes in messages.
pub fn format_shape(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_elements() {
        assert_eq!(element_count(&[]), Some(1));
        assert_eq!(element_count(&[2, 3]), Some(6));
        assert_eq!(element_count(&[2, 0]), Some(0));
        assert_eq!(element_count(&[2, -1]), None);
        assert_eq!(element_count(&[i64::MAX, 4]), None);
        assert_eq!(format_shape(&[1, -1]), "[1,-1]");
    }
}
