//! What a TorchScript module's forward() takes: its arguments' names and
//! types, read from the declaration libtorch prints when forward() is called
//! with no arguments (tch has no schema API).

use oxiserve_types::Error;
use tch::CModule;

/// forward()'s declaration, without `self`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature {
    pub args: Vec<Arg>,
    /// The declared result type, e.g. `Tensor` or `(Tensor, Tensor)`.
    pub returns: String,
}

/// One argument of forward().
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Arg {
    pub name: String,
    /// TorchScript's type, e.g. `Tensor`, `str[]`, `Dict(str, Tensor)`.
    pub ty: String,
    pub has_default: bool,
}

impl Arg {
    /// Whether the argument takes a list of strings (Triton's BYTES input).
    pub(crate) fn is_string_list(&self) -> bool {
        self.ty == "str[]" || self.ty == "List[str]"
    }

    /// Whether the argument takes a `Dict(str, Tensor)` of every input.
    pub(crate) fn is_tensor_dict(&self) -> bool {
        self.ty.replace(' ', "") == "Dict(str,Tensor)"
    }
}

impl Signature {
    /// forward()'s signature; `None` when forward() ran without arguments
    /// (every argument has a default) or libtorch said no declaration.
    pub(crate) fn of(module: &CModule) -> Option<Self> {
        let message = match module.forward_is::<tch::IValue>(&[]) {
            Ok(_) => return None,
            Err(error) => error.to_string(),
        };
        let start = message.find("Declaration: forward(")? + "Declaration: ".len();
        let line = message[start..].lines().next()?;
        Self::parse(line)
    }

    /// Parses `forward(__torch__.M self, Tensor x, int n=3) -> Tensor`.
    pub(crate) fn parse(declaration: &str) -> Option<Self> {
        let body = declaration.strip_prefix("forward(")?;
        let close = matching_close(body)?;
        let returns = body[close + 1..]
            .trim()
            .strip_prefix("->")
            .map_or_else(String::new, |r| r.trim().to_string());
        let args = split_top_level(&body[..close])
            .into_iter()
            .filter(|a| *a != "*")
            .filter_map(parse_arg)
            .filter(|a| a.name != "self")
            .collect();
        Some(Self { args, returns })
    }

    /// How messages show it: `forward(Tensor x, Tensor y) -> Tensor`.
    pub(crate) fn display(&self) -> String {
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| format!("{} {}", a.ty, a.name))
            .collect();
        format!("forward({}) -> {}", args.join(", "), self.returns)
    }

    /// The arguments a request must fill (those without defaults).
    pub(crate) fn required(&self) -> impl Iterator<Item = &Arg> {
        self.args.iter().filter(|a| !a.has_default)
    }
}

/// An error whose message ends with what forward() takes, when known.
pub(crate) fn with_signature(message: String, signature: Option<&Signature>) -> Error {
    match signature {
        Some(s) => Error::invalid_arg(format!("{message}; the model's {}", s.display())),
        None => Error::invalid_arg(message),
    }
}

/// The index of the `)` closing the declaration's argument list.
fn matching_close(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Splits at commas outside brackets.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts.retain(|p| !p.is_empty());
    parts
}

/// `Dict(str, Tensor) d` or `int n=3`.
fn parse_arg(text: &str) -> Option<Arg> {
    let (decl, has_default) = match split_default(text) {
        Some(at) => (&text[..at], true),
        None => (text, false),
    };
    let (ty, name) = decl.trim().rsplit_once(' ')?;
    Some(Arg {
        name: name.to_string(),
        ty: ty.trim().to_string(),
        has_default,
    })
}

/// The position of a top-level `=` (a default value).
fn split_default(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_traced_declaration() {
        let s = Signature::parse(
            "forward(__torch__.M self, Tensor input_ids, Tensor attention_mask) -> Tensor",
        )
        .unwrap();
        let names: Vec<_> = s.args.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["input_ids", "attention_mask"]);
        assert_eq!(s.returns, "Tensor");
        assert_eq!(
            s.display(),
            "forward(Tensor input_ids, Tensor attention_mask) -> Tensor"
        );
    }

    #[test]
    fn parses_nested_types_and_defaults() {
        let s = Signature::parse(
            "forward(__torch__.S self, str[] x, Dict(str, Tensor) d, Tensor y, int[] n=[1, 2]) -> ((Tensor, str[]))",
        )
        .unwrap();
        assert_eq!(s.args.len(), 4);
        assert!(s.args[0].is_string_list());
        assert!(s.args[1].is_tensor_dict());
        assert_eq!(s.args[1].name, "d");
        assert_eq!(s.args[3].name, "n");
        assert!(s.args[3].has_default);
        assert_eq!(s.required().count(), 3);
        assert_eq!(s.returns, "((Tensor, str[]))");
    }

    #[test]
    fn refuses_what_is_not_a_declaration() {
        assert_eq!(Signature::parse("RuntimeError: oops"), None);
    }
}
