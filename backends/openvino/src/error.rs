//! OpenVINO's errors as one line: its messages carry a stack of
//! `Exception from <file>:<line>:` lines, the last of which says what is wrong.

use openvino::InferenceError;

/// `error`'s message without OpenVINO's source locations, on one line.
pub(crate) fn describe(error: &InferenceError) -> String {
    let Some(message) = &error.message else {
        return error.kind.to_string();
    };
    let text: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("Exception from "))
        .collect();
    if text.is_empty() {
        error.kind.to_string()
    } else {
        text.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use openvino::InferenceErrorKind;

    use super::*;

    #[test]
    fn keeps_what_is_wrong() {
        let error = InferenceError {
            kind: InferenceErrorKind::GeneralError,
            message: Some(
                "Exception from src/inference/src/cpp/core.cpp:117:\nException from \
                 src/inference/src/dev/core_impl.cpp:706:\nDevice with \"X\" name is not \
                 registered in the OpenVINO Runtime\n\n"
                    .into(),
            ),
        };
        assert_eq!(
            describe(&error),
            "Device with \"X\" name is not registered in the OpenVINO Runtime"
        );
    }
}
