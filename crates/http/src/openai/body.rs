//! The JSON body of an OpenAI request: its members taken one by one, each
//! check naming the member at fault. A `null` member counts as absent.

use axum::{body::Bytes, extract::rejection::BytesRejection};
use serde_json::{Map, Value};

use super::error::{OpenAiError, OpenAiResult};
use crate::{app::App, handlers::infer::body_error};

/// The members of a request body not yet taken.
#[derive(Debug)]
pub(super) struct Body(Map<String, Value>);

impl Body {
    /// The body of a request, read within the HTTP endpoint's size limit.
    pub fn read(app: &App, body: Result<Bytes, BytesRejection>) -> OpenAiResult<Self> {
        let bytes = body.map_err(|rejection| OpenAiError::from(body_error(app, rejection)))?;
        Self::parse(&bytes)
    }

    /// The body's members; anything but a JSON object is refused.
    pub fn parse(bytes: &[u8]) -> OpenAiResult<Self> {
        match serde_json::from_slice(bytes) {
            Ok(Value::Object(members)) => Ok(Self(members)),
            Ok(_) => Err(OpenAiError::invalid(
                None,
                "the request body must be a JSON object",
            )),
            Err(e) => Err(OpenAiError::invalid(
                None,
                format!("the request body is not valid JSON: {e}"),
            )),
        }
    }

    /// Takes member `name` out of the body (`None` when absent or null).
    pub fn take(&mut self, name: &str) -> Option<Value> {
        self.0.remove(name).filter(|value| !value.is_null())
    }

    /// Takes the required member `name`, a string.
    pub fn required_string(&mut self, name: &str) -> OpenAiResult<String> {
        match self.take(name) {
            Some(Value::String(text)) => Ok(text),
            Some(_) => Err(OpenAiError::invalid(
                Some(name),
                format!("'{name}' must be a string"),
            )),
            None => Err(OpenAiError::invalid(
                Some(name),
                format!("'{name}' is a required property"),
            )),
        }
    }

    /// Takes the optional member `name`, a boolean (false when absent).
    pub fn flag(&mut self, name: &str) -> OpenAiResult<bool> {
        match self.take(name) {
            None => Ok(false),
            Some(Value::Bool(flag)) => Ok(flag),
            Some(_) => Err(OpenAiError::invalid(
                Some(name),
                format!("'{name}' must be a boolean"),
            )),
        }
    }

    /// Refuses member `name` unless it is absent or `accepted` holds for
    /// it: oxiserve does not implement what other values ask for.
    pub fn refuse(
        &mut self,
        name: &str,
        accepted: fn(&Value) -> bool,
        why: &str,
    ) -> OpenAiResult<()> {
        match self.take(name) {
            Some(value) if !accepted(&value) => Err(OpenAiError::invalid(
                Some(name),
                format!("'{name}' is not supported: {why}"),
            )),
            _ => Ok(()),
        }
    }

    /// The members left, in the order they came.
    pub fn rest(self) -> Map<String, Value> {
        self.0
    }
}

/// What each endpoint refuses: a member, the values that are accepted
/// (those that ask for nothing oxiserve lacks) and why the others are not.
pub(super) type Refusal = (&'static str, fn(&Value) -> bool, &'static str);

/// The members of both completion endpoints oxiserve does not implement.
pub(super) const REFUSED_BY_COMPLETIONS: [Refusal; 2] = [
    ("n", is_one, "only n=1 (one choice) is supported"),
    (
        "logit_bias",
        is_empty_object,
        "token biases need the model's tokenizer",
    ),
];

/// `1`.
pub(super) fn is_one(value: &Value) -> bool {
    value.as_u64() == Some(1)
}

/// `false`.
pub(super) fn is_false(value: &Value) -> bool {
    value == &Value::Bool(false)
}

/// `{}`.
pub(super) fn is_empty_object(value: &Value) -> bool {
    value.as_object().is_some_and(Map::is_empty)
}

/// `[]`.
pub(super) fn is_empty_array(value: &Value) -> bool {
    value.as_array().is_some_and(Vec::is_empty)
}

/// Takes `stream` and `stream_options`: whether the answer is streamed.
/// Usage counts in the stream are refused: oxiserve does not count tokens.
pub(super) fn take_stream(body: &mut Body) -> OpenAiResult<bool> {
    let stream = body.flag("stream")?;
    let Some(options) = body.take("stream_options") else {
        return Ok(stream);
    };
    if !stream {
        return Err(OpenAiError::invalid(
            Some("stream_options"),
            "'stream_options' is only allowed with 'stream': true",
        ));
    }
    if options.get("include_usage") == Some(&Value::Bool(true)) {
        return Err(OpenAiError::invalid(
            Some("stream_options"),
            "'include_usage' is not supported: oxiserve does not count tokens",
        ));
    }
    Ok(stream)
}

/// Checks `refusals` on `body`, taking their members out.
pub(super) fn check(body: &mut Body, refusals: &[Refusal]) -> OpenAiResult<()> {
    for (name, accepted, why) in refusals {
        body.refuse(name, *accepted, why)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(json: &str) -> Body {
        Body::parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn bodies_must_be_objects() {
        for text in ["[1]", "{", "3"] {
            let error = Body::parse(text.as_bytes()).unwrap_err();
            assert_eq!(error.status, 400, "{text}");
        }
    }

    #[test]
    fn members_are_taken_with_their_names_in_errors() {
        let mut b = body(r#"{"model":"m","stream":true,"n":null,"x":1}"#);
        assert_eq!(b.required_string("model").unwrap(), "m");
        assert!(b.flag("stream").unwrap());
        assert_eq!(b.take("n"), None, "null is absent");
        assert_eq!(b.rest().len(), 1);
        let error = body("{}").required_string("model").unwrap_err();
        assert_eq!(
            (error.param.as_deref(), error.message.as_str()),
            (Some("model"), "'model' is a required property")
        );
        let error = body(r#"{"stream":"yes"}"#).flag("stream").unwrap_err();
        assert_eq!(error.param.as_deref(), Some("stream"));
    }

    #[test]
    fn unsupported_values_are_refused_and_defaults_accepted() {
        let mut b = body(r#"{"n":1,"logit_bias":{}}"#);
        check(&mut b, &REFUSED_BY_COMPLETIONS).unwrap();
        assert!(b.rest().is_empty());
        let error = check(&mut body(r#"{"n":2}"#), &REFUSED_BY_COMPLETIONS).unwrap_err();
        assert_eq!(
            error.message,
            "'n' is not supported: only n=1 (one choice) is supported"
        );
    }

    #[test]
    fn stream_options_need_a_stream_and_no_usage() {
        assert!(take_stream(&mut body(r#"{"stream":true,"stream_options":{}}"#)).unwrap());
        assert!(!take_stream(&mut body("{}")).unwrap());
        for json in [
            r#"{"stream_options":{}}"#,
            r#"{"stream":true,"stream_options":{"include_usage":true}}"#,
        ] {
            let error = take_stream(&mut body(json)).unwrap_err();
            assert_eq!(error.param.as_deref(), Some("stream_options"), "{json}");
        }
    }
}
