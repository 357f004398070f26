//! libtorch's errors cut down to the line that says what went wrong: a
//! TorchScript error carries the interpreter's traceback and libtorch's C++
//! frames, of which clients need only the message.

use tch::TchError;

/// The useful part of a libtorch error.
pub(crate) fn message(error: &TchError) -> String {
    match error {
        TchError::Torch(text) => last_useful_line(text),
        other => other.to_string(),
    }
}

/// The last `...Error: <message>` line of a TorchScript traceback, without
/// the C++ frames; else the first line.
pub(crate) fn last_useful_line(text: &str) -> String {
    let text = text
        .split("Exception raised from")
        .next()
        .unwrap_or(text)
        .trim();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let raised = lines.iter().rev().find_map(|line| {
        let (kind, rest) = line.split_once(": ")?;
        let is_exception = (kind.ends_with("Error") || kind.ends_with("Exception"))
            && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
        is_exception.then_some(rest)
    });
    raised
        .or(lines.first().copied())
        .unwrap_or("unknown libtorch error")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_error_line_of_a_traceback() {
        let text = "The following operation failed in the TorchScript interpreter.\n\
                    Traceback of TorchScript (most recent call last):\n\
                    /tmp/model.py(5): forward\n\
                    RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0\n";
        assert_eq!(
            last_useful_line(text),
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
        );
    }

    #[test]
    fn drops_cpp_frames() {
        let text = "Expected all tensors to be on the same device\n\
                    Exception raised from check at /pytorch/aten/src/x.cpp:12 (most recent call first):\n\
                    frame #0: c10::Error::Error(...)";
        assert_eq!(
            last_useful_line(text),
            "Expected all tensors to be on the same device"
        );
    }
}
