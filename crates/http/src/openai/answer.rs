//! Running a completion and answering it: one JSON object when the whole
//! text is there, or (`stream: true`) chunks as the model sends it. `usage`
//! is left out: oxiserve does not count tokens.

use std::sync::Arc;

use axum::response::Response;
use oxiserve_core::LoadedModel;
use serde_json::{Map, Value, json};

use super::{
    error::OpenAiResult,
    generation::{Generated, collect, prepare},
    reply::{Endpoint, Reply, json},
    stream::{self, Chunks},
};
use crate::app::App;

/// What a completion is made of.
#[derive(Debug)]
pub(super) struct Completion {
    pub endpoint: Endpoint,
    /// The model as the request names it.
    pub name: String,
    pub model: Arc<LoadedModel>,
    pub prompt: String,
    pub stream: bool,
    /// The request's other members: inputs or request parameters.
    pub members: Map<String, Value>,
}

/// Runs `completion` and answers it.
pub(super) async fn answer(app: &App, completion: Completion) -> OpenAiResult<Response> {
    let Completion {
        endpoint,
        name,
        model,
        prompt,
        stream,
        mut members,
    } = completion;
    // `stream` goes to the model too (an input of that name, or a parameter).
    members.insert("stream".into(), Value::Bool(stream));
    let generation = prepare(model, &name, prompt, &members)?;
    let responses = app.server.infer_on(&generation.model, generation.request)?;
    let reply = Reply::new(endpoint, &name);
    if stream {
        return stream::respond(responses, Chunks { reply }).await;
    }
    let generated = collect(responses).await?;
    Ok(json(&whole(&reply, &generated)))
}

/// The answer with the whole text: a `text_completion` with `text`, or a
/// `chat.completion` with the assistant's `message`.
fn whole(reply: &Reply, generated: &Generated) -> Value {
    let (object, choice) = match reply.endpoint {
        Endpoint::Completions => (
            "text_completion",
            json!({"index": 0, "text": generated.text, "logprobs": null,
                "finish_reason": generated.finish_reason()}),
        ),
        Endpoint::Chat => (
            "chat.completion",
            json!({"index": 0, "message": {"role": "assistant", "content": generated.text},
                "logprobs": null, "finish_reason": generated.finish_reason()}),
        ),
    };
    json!({"id": reply.id, "object": object, "created": reply.created,
        "model": reply.model, "choices": [choice]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_answers_have_openai_shapes() {
        let mut reply = Reply {
            endpoint: Endpoint::Completions,
            id: "cmpl-1".into(),
            created: 3,
            model: "m".into(),
        };
        let generated = Generated {
            text: "hi".into(),
            reason: Some("length".into()),
        };
        assert_eq!(
            whole(&reply, &generated),
            json!({"id": "cmpl-1", "object": "text_completion", "created": 3, "model": "m",
                "choices": [{"index": 0, "text": "hi", "logprobs": null,
                    "finish_reason": "length"}]})
        );
        reply.endpoint = Endpoint::Chat;
        let chat = whole(&reply, &Generated::default());
        assert_eq!(chat["object"], "chat.completion");
        assert_eq!(
            chat["choices"][0],
            json!({"index": 0, "message": {"role": "assistant", "content": ""},
                "logprobs": null, "finish_reason": "stop"})
        );
    }
}
