//! `POST /v1/chat/completions`: the messages become the prompt through the
//! model's chat template (see `template`), then the completion runs as
//! `/v1/completions` runs. A message's `content` is a string, a list of
//! text parts (joined) or null (empty); `max_completion_tokens` is sent as
//! `max_tokens`.

use axum::{
    body::Bytes,
    extract::{State, rejection::BytesRejection},
    response::Response,
};
use serde_json::{Value, json};

use super::{
    answer::{Completion, answer},
    body::{Body, REFUSED_BY_COMPLETIONS, Refusal, check, is_empty_array, is_false, take_stream},
    error::{OpenAiError, OpenAiResult},
    models::find,
    reply::Endpoint,
    template::chat_prompt,
};
use crate::app::App;

/// What chat refuses beyond what both endpoints refuse: tools, log
/// probabilities and answers that are not text.
const REFUSED: [Refusal; 8] = [
    (
        "logprobs",
        is_false,
        "log probabilities need the model's tokens",
    ),
    (
        "top_logprobs",
        |_| false,
        "log probabilities need the model's tokens",
    ),
    ("tools", is_empty_array, "tool calls are not supported"),
    (
        "tool_choice",
        |value| value == "none",
        "tool calls are not supported",
    ),
    (
        "functions",
        is_empty_array,
        "function calls are not supported",
    ),
    (
        "function_call",
        |value| value == "none",
        "function calls are not supported",
    ),
    (
        "response_format",
        |value| value["type"] == "text",
        "only text answers are supported",
    ),
    (
        "modalities",
        |value| value == &json!(["text"]),
        "only text answers are supported",
    ),
];

/// Answers the conversation's next message.
pub(super) async fn chat_completions(
    State(app): State<App>,
    body: Result<Bytes, BytesRejection>,
) -> OpenAiResult<Response> {
    let mut body = Body::read(&app, body)?;
    let name = body.required_string("model")?;
    let messages = take_messages(&mut body)?;
    let stream = take_stream(&mut body)?;
    check(&mut body, &REFUSED_BY_COMPLETIONS)?;
    check(&mut body, &REFUSED)?;
    body.take("user");
    body.take("parallel_tool_calls");
    let limit = body.take("max_completion_tokens");
    let model = find(&app, &name)?;
    let prompt = chat_prompt(&name, model.config(), &messages)?;
    let mut members = body.rest();
    if let Some(limit) = limit {
        members.insert("max_tokens".into(), limit);
    }
    let completion = Completion {
        endpoint: Endpoint::Chat,
        name,
        model,
        prompt,
        stream,
        members,
    };
    answer(&app, completion).await
}

/// The messages, each an object with a string `role` and its `content`
/// made a string.
fn take_messages(body: &mut Body) -> OpenAiResult<Vec<Value>> {
    let Some(Value::Array(mut messages)) = body.take("messages") else {
        return Err(OpenAiError::invalid(
            Some("messages"),
            "'messages' must be a list of messages",
        ));
    };
    if messages.is_empty() {
        return Err(OpenAiError::invalid(
            Some("messages"),
            "'messages' must hold at least one message",
        ));
    }
    for (index, message) in messages.iter_mut().enumerate() {
        let param = format!("messages[{index}]");
        let invalid = |why: &str| OpenAiError::invalid(Some(&param), format!("{param}: {why}"));
        let Value::Object(message) = message else {
            return Err(invalid("a message must be an object"));
        };
        if !message.get("role").is_some_and(Value::is_string) {
            return Err(invalid("'role' must be a string"));
        }
        let content = match message.remove("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text,
            Some(Value::Array(parts)) => text_of(&parts).ok_or_else(|| {
                invalid("only text parts ({\"type\": \"text\", \"text\": ...}) are supported")
            })?,
            Some(_) => return Err(invalid("'content' must be a string or a list of parts")),
        };
        message.insert("content".into(), Value::String(content));
    }
    Ok(messages)
}

/// The text of content parts, if all are text parts.
fn text_of(parts: &[Value]) -> Option<String> {
    parts
        .iter()
        .map(
            |part| match (part["type"].as_str(), part["text"].as_str()) {
                (Some("text"), Some(text)) => Some(text),
                _ => None,
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(json: Value) -> OpenAiResult<Vec<Value>> {
        take_messages(&mut Body::parse(json.to_string().as_bytes()).unwrap())
    }

    #[test]
    fn contents_become_strings() {
        let taken = messages(json!({"messages": [
            {"role": "system", "content": "s", "name": "x"},
            {"role": "user", "content": [{"type": "text", "text": "a"},
                {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": null},
        ]}))
        .unwrap();
        assert_eq!(
            taken,
            [
                json!({"role": "system", "name": "x", "content": "s"}),
                json!({"role": "user", "content": "ab"}),
                json!({"role": "assistant", "content": ""}),
            ]
        );
    }

    #[test]
    fn bad_messages_are_named() {
        let cases = [
            (json!({}), "messages"),
            (json!({"messages": []}), "messages"),
            (json!({"messages": "hi"}), "messages"),
            (json!({"messages": [{"content": "hi"}]}), "messages[0]"),
            (
                json!({"messages": [{"role": "user", "content": "a"}, 3]}),
                "messages[1]",
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}),
                "messages[0]",
            ),
            (
                json!({"messages": [{"role": "user", "content": 5}]}),
                "messages[0]",
            ),
        ];
        for (json, param) in cases {
            let error = messages(json.clone()).unwrap_err();
            assert_eq!(
                (error.status.as_u16(), error.param.as_deref()),
                (400, Some(param)),
                "{json}"
            );
        }
    }

    #[test]
    fn tools_and_other_answers_are_refused_but_their_defaults_taken() {
        let accepted = json!({"logprobs": false, "tools": [], "tool_choice": "none",
            "response_format": {"type": "text"}, "modalities": ["text"]});
        let mut body = Body::parse(accepted.to_string().as_bytes()).unwrap();
        check(&mut body, &REFUSED).unwrap();
        assert!(body.rest().is_empty());
        for (name, value) in [
            ("tools", json!([{"type": "function"}])),
            ("logprobs", json!(true)),
            ("response_format", json!({"type": "json_object"})),
        ] {
            let json = json!({ name: value });
            let mut body = Body::parse(json.to_string().as_bytes()).unwrap();
            let error = check(&mut body, &REFUSED).unwrap_err();
            assert_eq!(error.param.as_deref(), Some(name));
        }
    }
}
