//! `POST /v1/completions`: one prompt (a string, or a list of one string)
//! completed by a model of the generate convention.

use axum::{
    body::Bytes,
    extract::{State, rejection::BytesRejection},
    response::Response,
};
use serde_json::Value;

use super::{
    answer::{Completion, answer},
    body::{Body, REFUSED_BY_COMPLETIONS, Refusal, check, is_false, is_one, take_stream},
    error::{OpenAiError, OpenAiResult},
    models::find,
    reply::Endpoint,
};
use crate::app::App;

/// What `/v1/completions` refuses beyond what both endpoints refuse.
const REFUSED: [Refusal; 4] = [
    ("best_of", is_one, "only best_of=1 is supported"),
    ("echo", is_false, "the prompt is not echoed"),
    (
        "logprobs",
        |_| false,
        "log probabilities need the model's tokens",
    ),
    (
        "suffix",
        |value| value == "",
        "the model has no suffix input",
    ),
];

/// Completes the request's prompt.
pub(super) async fn completions(
    State(app): State<App>,
    body: Result<Bytes, BytesRejection>,
) -> OpenAiResult<Response> {
    let mut body = Body::read(&app, body)?;
    let name = body.required_string("model")?;
    let prompt = take_prompt(&mut body)?;
    let stream = take_stream(&mut body)?;
    check(&mut body, &REFUSED_BY_COMPLETIONS)?;
    check(&mut body, &REFUSED)?;
    body.take("user");
    let model = find(&app, &name)?;
    let completion = Completion {
        endpoint: Endpoint::Completions,
        name,
        model,
        prompt,
        stream,
        members: body.rest(),
    };
    answer(&app, completion).await
}

/// The prompt: a string or a list of one string (token lists and several
/// prompts are refused).
fn take_prompt(body: &mut Body) -> OpenAiResult<String> {
    let refuse = |why: &str| Err(OpenAiError::invalid(Some("prompt"), why));
    match body.take("prompt") {
        Some(Value::String(prompt)) => Ok(prompt),
        Some(Value::Array(mut prompts)) => match prompts.pop() {
            Some(Value::String(prompt)) if prompts.is_empty() => Ok(prompt),
            Some(Value::String(_)) => refuse("only one prompt per request is supported"),
            _ => refuse("'prompt' must be a string (token lists need the model's tokenizer)"),
        },
        Some(_) => refuse("'prompt' must be a string"),
        None => refuse("'prompt' is a required property"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(json: &str) -> OpenAiResult<String> {
        take_prompt(&mut Body::parse(json.as_bytes()).unwrap())
    }

    #[test]
    fn one_prompt_is_taken() {
        assert_eq!(prompt(r#"{"prompt":"hi"}"#).unwrap(), "hi");
        assert_eq!(prompt(r#"{"prompt":["hi"]}"#).unwrap(), "hi");
        for json in [
            "{}",
            r#"{"prompt":["a","b"]}"#,
            r#"{"prompt":[1,2]}"#,
            r#"{"prompt":[]}"#,
            r#"{"prompt":3}"#,
        ] {
            let error = prompt(json).unwrap_err();
            assert_eq!(
                (error.status.as_u16(), error.param.as_deref()),
                (400, Some("prompt")),
                "{json}"
            );
        }
    }

    #[test]
    fn defaults_of_unsupported_members_are_accepted() {
        let mut body = Body::parse(br#"{"best_of":1,"echo":false,"suffix":""}"#).unwrap();
        check(&mut body, &REFUSED).unwrap();
        let mut body = Body::parse(br#"{"logprobs":0}"#).unwrap();
        assert_eq!(
            check(&mut body, &REFUSED).unwrap_err().param.as_deref(),
            Some("logprobs")
        );
    }
}
