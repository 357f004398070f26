//! Which config input goes to which forward() argument, and which config
//! output is which element of forward()'s result, by Triton's rules: names
//! of forward()'s arguments, else `<name>__<index>` names, else the order of
//! the configuration.

use crate::signature::Signature;

/// How the inputs reach forward().
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InputLayout {
    /// One `Dict(str, Tensor)` argument holding every input by name.
    Dict,
    /// Positional arguments: `positions[i]` is where config input `i` goes.
    Positional(Vec<usize>),
}

/// The index in a `<name>__<index>` name (`INPUT__0`, `output__12`).
pub(crate) fn named_index(name: &str) -> Option<usize> {
    let (_, index) = name.rsplit_once("__")?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    index.parse().ok()
}

/// Where each of the configuration's inputs goes. Errors name the inputs
/// and what forward() takes.
pub(crate) fn input_layout(
    names: &[String],
    signature: Option<&Signature>,
) -> Result<InputLayout, String> {
    if let Some(signature) = signature {
        let required = signature.required().count();
        if signature.args.len() == 1 && signature.args[0].is_tensor_dict() {
            return Ok(InputLayout::Dict);
        }
        if names.len() < required || names.len() > signature.args.len() {
            return Err(format!(
                "the configuration has {} input(s), forward() takes {}",
                names.len(),
                if required == signature.args.len() {
                    required.to_string()
                } else {
                    format!("{required} to {}", signature.args.len())
                }
            ));
        }
        let by_name: Option<Vec<usize>> = names
            .iter()
            .map(|n| signature.args.iter().position(|a| &a.name == n))
            .collect();
        if let Some(positions) = by_name {
            if (0..names.len()).any(|p| !positions.contains(&p)) {
                return Err(format!(
                    "inputs named after forward()'s arguments must be its first {} arguments",
                    names.len()
                ));
            }
            return Ok(InputLayout::Positional(positions));
        }
    }
    Ok(InputLayout::Positional(indexed_or_ordered(names, "input")?))
}

/// Which element of forward()'s result each configured output is.
pub(crate) fn output_positions(names: &[String]) -> Result<Vec<usize>, String> {
    indexed_or_ordered(names, "output")
}

/// The `__<index>` of every name when all have one, else the names' order.
fn indexed_or_ordered(names: &[String], kind: &str) -> Result<Vec<usize>, String> {
    let Some(indices) = names
        .iter()
        .map(|n| named_index(n))
        .collect::<Option<Vec<usize>>>()
    else {
        return Ok((0..names.len()).collect());
    };
    for (i, &index) in indices.iter().enumerate() {
        if index >= names.len() || indices[..i].contains(&index) {
            return Err(format!(
                "{kind} '{}': with {} {kind}s named <name>__<index>, the indices must be 0 to {} once each",
                names[i],
                names.len(),
                names.len().saturating_sub(1)
            ));
        }
    }
    Ok(indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn signature(declaration: &str) -> Signature {
        Signature::parse(declaration).unwrap()
    }

    #[test]
    fn reads_named_indices() {
        assert_eq!(named_index("INPUT__0"), Some(0));
        assert_eq!(named_index("input__12"), Some(12));
        assert_eq!(named_index("INPUT0"), None);
        assert_eq!(named_index("INPUT__x"), None);
        assert_eq!(named_index("INPUT__"), None);
    }

    #[test]
    fn forward_argument_names_come_first() {
        let s = signature("forward(__torch__.M self, Tensor a, Tensor b) -> Tensor");
        assert_eq!(
            input_layout(&names(&["b", "a"]), Some(&s)),
            Ok(InputLayout::Positional(vec![1, 0]))
        );
        assert_eq!(
            input_layout(&names(&["INPUT__1", "INPUT__0"]), Some(&s)),
            Ok(InputLayout::Positional(vec![1, 0]))
        );
        assert_eq!(
            input_layout(&names(&["x", "y"]), Some(&s)),
            Ok(InputLayout::Positional(vec![0, 1]))
        );
    }

    #[test]
    fn counts_must_match_forward() {
        let s = signature("forward(__torch__.M self, Tensor a, Tensor b) -> Tensor");
        let error = input_layout(&names(&["a"]), Some(&s)).unwrap_err();
        assert_eq!(error, "the configuration has 1 input(s), forward() takes 2");
    }

    #[test]
    fn a_dict_argument_takes_every_input() {
        let s = signature("forward(__torch__.M self, Dict(str, Tensor) inputs) -> Tensor");
        assert_eq!(
            input_layout(&names(&["x", "y"]), Some(&s)),
            Ok(InputLayout::Dict)
        );
    }

    #[test]
    fn indices_must_cover_every_output_once() {
        assert_eq!(
            output_positions(&names(&["OUTPUT__1", "OUTPUT__0"])),
            Ok(vec![1, 0])
        );
        assert_eq!(output_positions(&names(&["y", "z"])), Ok(vec![0, 1]));
        let error = output_positions(&names(&["OUTPUT__0", "OUTPUT__0"])).unwrap_err();
        assert!(
            error.contains("indices must be 0 to 1 once each"),
            "{error}"
        );
    }
}
