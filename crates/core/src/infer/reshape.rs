//! Moving a shape between a tensor's configured `dims` and its `reshape`, as
//! Triton does: each -1 on one side takes the size at the matching -1 on the
//! other side, in order.

use oxiserve_types::element_count;

/// The shape `shape` (which fits `from`) takes in the pattern `to`. The
/// variable sizes of `shape` (where `from` has -1) fill the -1s of `to` in
/// order; when the counts differ and `to` has one -1, it takes whatever
/// keeps the element count.
pub(crate) fn map_shape(from: &[i64], shape: &[i64], to: &[i64]) -> Vec<i64> {
    let variable: Vec<i64> = from
        .iter()
        .zip(shape)
        .filter(|(d, _)| **d < 0)
        .map(|(_, s)| *s)
        .collect();
    let wildcards = to.iter().filter(|d| **d < 0).count();
    if wildcards == variable.len() {
        let mut sizes = variable.into_iter();
        return to
            .iter()
            .map(|&d| if d < 0 { sizes.next().unwrap_or(0) } else { d })
            .collect();
    }
    let elements = element_count(shape).unwrap_or(0) as i64;
    let known: i64 = to.iter().filter(|d| **d >= 0).product();
    to.iter()
        .map(|&d| match d {
            d if d >= 0 => d,
            _ if known > 0 => elements / known,
            _ => 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::map_shape;

    #[test]
    fn wildcards_map_in_order() {
        assert_eq!(
            map_shape(&[-1, 2, -1], &[3, 2, 5], &[-1, 2, -1, 1]),
            vec![3, 2, 5, 1]
        );
        assert_eq!(map_shape(&[-1, 6], &[5, 6], &[-1, 2, 3]), vec![5, 2, 3]);
    }

    #[test]
    fn one_wildcard_keeps_the_element_count() {
        assert_eq!(map_shape(&[2, 2], &[2, 2], &[-1]), vec![4]);
        assert_eq!(map_shape(&[4], &[4], &[2, 2]), vec![2, 2]);
    }
}
