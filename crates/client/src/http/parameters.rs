//! Request, response and tensor parameters as JSON objects.

use oxiserve_types::{ParameterValue, Parameters};
use serde_json::{Map, Value};

/// `parameters` as a JSON object.
pub(crate) fn to_json(parameters: &Parameters) -> Map<String, Value> {
    parameters
        .iter()
        .map(|(key, value)| {
            let value = match value {
                ParameterValue::Bool(b) => Value::from(*b),
                ParameterValue::Int(i) => Value::from(*i),
                ParameterValue::Uint(u) => Value::from(*u),
                ParameterValue::Double(d) => Value::from(*d),
                ParameterValue::String(s) => Value::from(s.as_str()),
            };
            (key.clone(), value)
        })
        .collect()
}

/// The parameters of a JSON `parameters` object (absent: none); values
/// that are not scalars are left out.
pub(crate) fn from_json(object: Option<&Value>) -> Parameters {
    let Some(Value::Object(map)) = object else {
        return Parameters::new();
    };
    map.iter()
        .filter_map(|(key, value)| {
            let value = match value {
                Value::Bool(b) => ParameterValue::Bool(*b),
                Value::String(s) => ParameterValue::String(s.clone()),
                Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                    (Some(i), _) => ParameterValue::Int(i),
                    (None, Some(u)) => ParameterValue::Uint(u),
                    _ => ParameterValue::Double(n.as_f64()?),
                },
                _ => return None,
            };
            Some((key.clone(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parameters_round_trip() {
        let json = json!({"a": true, "b": -1, "c": u64::MAX, "d": 0.5, "e": "x"});
        let parameters = from_json(Some(&json));
        assert_eq!(parameters["c"], ParameterValue::Uint(u64::MAX));
        assert_eq!(Value::Object(to_json(&parameters)), json);
        assert!(from_json(Some(&json!({"n": null}))).is_empty());
    }
}
