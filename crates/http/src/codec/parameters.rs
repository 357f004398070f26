//! `"parameters": {...}` objects <-> [`Parameters`].

use std::fmt::Display;

use oxiserve_types::{Error, ParameterValue, Parameters};
use serde_json::Value;
use serde_json::value::RawValue;

use super::json_write;
use super::special_literals;

/// A parameter value JSON cannot hold as a [`ParameterValue`] (an array, an
/// object or null).
pub(crate) struct InvalidType;

/// Parses a `parameters` object into its members. `owner` says whose
/// parameters they are in messages (`"the request"`, `"input 'INPUT0'"`);
/// it is formatted only when there is a message.
pub(crate) fn parse_object(
    raw: &RawValue,
    owner: impl Display,
) -> Result<serde_json::Map<String, Value>, Error> {
    serde_json::from_str(raw.get()).map_err(|_| {
        Error::internal(format!(
            "Unable to parse 'parameters' of {owner}: expected an object"
        ))
    })
}

/// Converts parsed members. Values that are not a bool, number or string go
/// to `on_invalid`, which may refuse the request or skip the value.
///
/// `specials`: the header went through the NaN and infinity rewrite, whose
/// placeholder strings are doubles here.
pub(crate) fn collect(
    object: serde_json::Map<String, Value>,
    specials: bool,
    mut on_invalid: impl FnMut(&str) -> Result<(), Error>,
) -> Result<Parameters, Error> {
    let mut parameters = Parameters::new();
    for (key, value) in object {
        let value = match value {
            Value::String(s) if specials => match special_literals::value(&s) {
                Some(value) => Ok(ParameterValue::Double(value)),
                None => Ok(ParameterValue::String(s)),
            },
            value => to_parameter(value),
        };
        match value {
            Ok(value) => {
                parameters.insert(key, value);
            }
            Err(InvalidType) => on_invalid(&key)?,
        }
    }
    Ok(parameters)
}

/// The [`ParameterValue`] of a JSON value: integers that fit `i64` are `Int`,
/// larger ones `Uint`, other numbers `Double`.
pub(crate) fn to_parameter(value: Value) -> Result<ParameterValue, InvalidType> {
    Ok(match value {
        Value::Bool(b) => ParameterValue::Bool(b),
        Value::String(s) => ParameterValue::String(s),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                ParameterValue::Int(i)
            } else if let Some(u) = n.as_u64() {
                ParameterValue::Uint(u)
            } else {
                ParameterValue::Double(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::Null | Value::Array(_) | Value::Object(_) => return Err(InvalidType),
    })
}

/// Triton's message for a request parameter of another type.
pub(crate) fn invalid_type_message(key: &str) -> String {
    format!("parameter '{key}' has invalid type. It should be either 'int', 'bool', or 'string'.")
}

/// Appends `parameters` as a JSON object, in name order.
pub(crate) fn write_parameters(out: &mut Vec<u8>, parameters: &Parameters) {
    out.push(b'{');
    for (i, (key, value)) in parameters.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_write::write_key(out, key);
        match value {
            ParameterValue::Bool(b) => json_write::write_bool(out, *b),
            ParameterValue::Int(i) => json_write::write_i64(out, *i),
            ParameterValue::Uint(u) => json_write::write_u64(out, *u),
            ParameterValue::Double(d) => json_write::write_f64(out, *d),
            ParameterValue::String(s) => json_write::write_string(out, s.as_bytes()),
        }
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_parameters(
        text: &str,
        owner: &str,
        on_invalid: impl FnMut(&str) -> Result<(), Error>,
    ) -> Result<Parameters, Error> {
        let raw = RawValue::from_string(text.to_string()).unwrap();
        collect(parse_object(&raw, owner)?, false, on_invalid)
    }

    #[test]
    fn parses_each_value_type() {
        let parameters = parse_parameters(
            r#"{"s":"x","i":-7,"u":18446744073709551615,"d":1.5,"b":true}"#,
            "the request",
            |key| Err(Error::invalid_arg(invalid_type_message(key))),
        )
        .unwrap();
        assert_eq!(parameters["s"], ParameterValue::String("x".into()));
        assert_eq!(parameters["i"], ParameterValue::Int(-7));
        assert_eq!(parameters["u"], ParameterValue::Uint(u64::MAX));
        assert_eq!(parameters["d"], ParameterValue::Double(1.5));
        assert_eq!(parameters["b"], ParameterValue::Bool(true));
    }

    #[test]
    fn invalid_values_go_to_the_callback() {
        let err = parse_parameters(r#"{"foo":{"a":1}}"#, "the request", |key| {
            Err(Error::invalid_arg(invalid_type_message(key)))
        })
        .unwrap_err();
        assert_eq!(
            err.message,
            "parameter 'foo' has invalid type. It should be either 'int', 'bool', or 'string'."
        );
        let parameters =
            parse_parameters(r#"{"a":[1],"b":null,"c":1}"#, "input 'X'", |_| Ok(())).unwrap();
        assert_eq!(parameters.len(), 1);
        let err = parse_parameters("5", "input 'X'", |_| Ok(())).unwrap_err();
        assert_eq!(
            err.message,
            "Unable to parse 'parameters' of input 'X': expected an object"
        );
    }

    #[test]
    fn writes_in_name_order() {
        let mut parameters = Parameters::new();
        parameters.insert("z".into(), ParameterValue::Bool(false));
        parameters.insert("a".into(), ParameterValue::String("q\"".into()));
        parameters.insert("m".into(), ParameterValue::Double(2.0));
        parameters.insert("n".into(), ParameterValue::Int(-1));
        parameters.insert("u".into(), ParameterValue::Uint(u64::MAX));
        let mut out = Vec::new();
        write_parameters(&mut out, &parameters);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":"q\"","m":2.0,"n":-1,"u":18446744073709551615,"z":false}"#
        );
    }
}
