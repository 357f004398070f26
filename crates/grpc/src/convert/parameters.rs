//! `map<string, InferParameter>` <-> [`Parameters`], with Triton's checks of
//! the request parameters it reads itself.

use std::collections::HashMap;

use oxiserve_proto::inference::{InferParameter, infer_parameter::ParameterChoice};
use oxiserve_types::{Error, ParameterValue, Parameters, Result};

/// The one `triton_` request parameter a client may set: ask for an empty
/// final response on a decoupled model's stream.
pub(crate) const ENABLE_EMPTY_FINAL: &str = "triton_enable_empty_final_response";

/// The response parameter saying whether a streamed response is the last.
pub(crate) const FINAL_RESPONSE: &str = "triton_final_response";

/// A request's parameters, checked as Triton checks them, and what the
/// frontend itself takes from them.
#[derive(Debug, Default)]
pub(crate) struct RequestParameters {
    /// The parameters the core sees.
    pub parameters: Parameters,
    /// `triton_enable_empty_final_response`.
    pub empty_final_response: bool,
}

/// Checks and converts request-level parameters.
pub(crate) fn request(map: HashMap<String, InferParameter>) -> Result<RequestParameters> {
    let mut out = RequestParameters::default();
    for (key, param) in map {
        let value = param.parameter_choice;
        let expected = |what: &str| {
            Error::invalid_arg(format!(
                "invalid value type for '{key}' parameter, expected {what}."
            ))
        };
        let value = match key.as_str() {
            "sequence_id" => match value {
                Some(ParameterChoice::Int64Param(i)) => ParameterValue::Int(i),
                Some(ParameterChoice::StringParam(s)) => ParameterValue::String(s),
                _ => return Err(expected("int64_param or string_param")),
            },
            "sequence_start" | "sequence_end" => match value {
                Some(ParameterChoice::BoolParam(b)) => ParameterValue::Bool(b),
                _ => return Err(expected("bool_param")),
            },
            "priority" => match value {
                Some(ParameterChoice::Int64Param(i)) if i < 0 => {
                    return Err(Error::invalid_arg(
                        "invalid value for 'priority', expected value >= 0.",
                    ));
                }
                Some(ParameterChoice::Int64Param(i)) => ParameterValue::Int(i),
                Some(ParameterChoice::Uint64Param(u)) => ParameterValue::Uint(u),
                _ => return Err(expected("int64_param or uint64_param")),
            },
            "timeout" => match value {
                Some(ParameterChoice::Int64Param(i)) => ParameterValue::Int(i),
                _ => return Err(expected("int64_param")),
            },
            ENABLE_EMPTY_FINAL => match value {
                Some(ParameterChoice::BoolParam(b)) => {
                    out.empty_final_response = b;
                    continue;
                }
                _ => return Err(expected("bool_param")),
            },
            _ if key.starts_with("triton_") => {
                return Err(Error::invalid_arg(format!(
                    "parameter keys starting with 'triton_' are reserved for Triton usage. Only \
                     the following keys starting with 'triton_' are allowed: {ENABLE_EMPTY_FINAL}"
                )));
            }
            _ => match value {
                Some(ParameterChoice::Uint64Param(_)) | None => {
                    return Err(expected("int64_param, bool_param, or string_param"));
                }
                Some(other) => from_choice(other),
            },
        };
        out.parameters.insert(key, value);
    }
    Ok(out)
}

/// Tensor parameters (inputs, requested outputs): every value type is kept.
pub(crate) fn tensor(map: HashMap<String, InferParameter>) -> Parameters {
    map.into_iter()
        .filter_map(|(key, p)| p.parameter_choice.map(|c| (key, from_choice(c))))
        .collect()
}

/// `parameters` in protobuf form.
pub(crate) fn to_proto(parameters: &Parameters) -> HashMap<String, InferParameter> {
    parameters
        .iter()
        .map(|(key, value)| (key.clone(), to_infer_parameter(value)))
        .collect()
}

/// One value in protobuf form.
pub(crate) fn to_infer_parameter(value: &ParameterValue) -> InferParameter {
    let choice = match value {
        ParameterValue::Bool(b) => ParameterChoice::BoolParam(*b),
        ParameterValue::Int(i) => ParameterChoice::Int64Param(*i),
        ParameterValue::Uint(u) => ParameterChoice::Uint64Param(*u),
        ParameterValue::Double(d) => ParameterChoice::DoubleParam(*d),
        ParameterValue::String(s) => ParameterChoice::StringParam(s.clone()),
    };
    InferParameter {
        parameter_choice: Some(choice),
    }
}

fn from_choice(choice: ParameterChoice) -> ParameterValue {
    match choice {
        ParameterChoice::BoolParam(b) => ParameterValue::Bool(b),
        ParameterChoice::Int64Param(i) => ParameterValue::Int(i),
        ParameterChoice::StringParam(s) => ParameterValue::String(s),
        ParameterChoice::DoubleParam(d) => ParameterValue::Double(d),
        ParameterChoice::Uint64Param(u) => ParameterValue::Uint(u),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(choice: ParameterChoice) -> InferParameter {
        InferParameter {
            parameter_choice: Some(choice),
        }
    }

    #[test]
    fn request_parameters_are_checked() {
        let map = HashMap::from([
            ("a".to_string(), param(ParameterChoice::DoubleParam(1.5))),
            (
                ENABLE_EMPTY_FINAL.to_string(),
                param(ParameterChoice::BoolParam(true)),
            ),
        ]);
        let out = request(map).unwrap();
        assert!(out.empty_final_response);
        assert_eq!(out.parameters["a"], ParameterValue::Double(1.5));
        assert!(!out.parameters.contains_key(ENABLE_EMPTY_FINAL));

        let bad = |key: &str, choice| {
            request(HashMap::from([(key.to_string(), param(choice))]))
                .unwrap_err()
                .message
        };
        assert!(bad("x", ParameterChoice::Uint64Param(1)).contains("int64_param, bool_param"));
        assert!(bad("priority", ParameterChoice::Int64Param(-1)).contains(">= 0"));
        assert!(bad("triton_x", ParameterChoice::BoolParam(true)).contains("reserved"));
        assert!(bad("sequence_start", ParameterChoice::Int64Param(1)).contains("bool_param"));
    }

    #[test]
    fn values_round_trip() {
        let values = [
            ParameterValue::Bool(true),
            ParameterValue::Int(-3),
            ParameterValue::Uint(u64::MAX),
            ParameterValue::Double(0.25),
            ParameterValue::String("s".into()),
        ];
        for value in values {
            let choice = to_infer_parameter(&value).parameter_choice.unwrap();
            assert_eq!(from_choice(choice), value);
        }
    }
}
