//! `stream: true`: a generation's responses as OpenAI's chunks, sent as
//! Server-Sent Events and ended by `data: [DONE]`. Each response with text
//! is one chunk; the last chunk has no text and the `finish_reason`. An
//! error before the first response is an ordinary error answer (with its
//! status); a later one is a `data: {"error": ...}` event before `[DONE]`.

use std::{convert::Infallible, future::ready};

use axum::{
    body::{Body, Bytes},
    http::{HeaderValue, header},
    response::Response,
};
use futures_util::{StreamExt, stream};
use oxiserve_core::ResponseStream;
use serde_json::{Value, json};

use super::{
    error::{OpenAiError, OpenAiResult},
    generation::{Generated, finish_reason},
    reply::{Endpoint, Reply},
};
use crate::sse::{self, EVENT_STREAM};

/// The chunks of one answer.
#[derive(Debug)]
pub(super) struct Chunks {
    pub reply: Reply,
}

impl Chunks {
    /// A chunk with `text` (none: the last chunk) and `finish_reason`:
    /// completions' `text_completion` objects carry `text`, chat's
    /// `chat.completion.chunk` objects a `delta` (the first names the role).
    fn chunk(&self, text: Option<&str>, finish_reason: Option<&str>) -> Value {
        let (object, choice) = match self.reply.endpoint {
            Endpoint::Completions => (
                "text_completion",
                json!({"index": 0, "text": text.unwrap_or(""), "logprobs": null,
                    "finish_reason": finish_reason}),
            ),
            Endpoint::Chat => {
                let delta = match text {
                    Some(text) => json!({"content": text}),
                    None => json!({}),
                };
                (
                    "chat.completion.chunk",
                    json!({"index": 0, "delta": delta, "logprobs": null,
                        "finish_reason": finish_reason}),
                )
            }
        };
        json!({"id": self.reply.id, "object": object, "created": self.reply.created,
            "model": self.reply.model, "choices": [choice]})
    }

    /// What is sent before any text: chat's role.
    fn opening(&self) -> Vec<u8> {
        match self.reply.endpoint {
            Endpoint::Completions => Vec::new(),
            Endpoint::Chat => {
                let mut chunk = self.chunk(Some(""), None);
                chunk["choices"][0]["delta"] = json!({"role": "assistant", "content": ""});
                event(&chunk).to_vec()
            }
        }
    }

    /// The chunk of a response's text; nothing for a response without text.
    fn text(&self, text: &str) -> Vec<u8> {
        match text {
            "" => Vec::new(),
            text => event(&self.chunk(Some(text), None)).to_vec(),
        }
    }

    /// The last chunk and `[DONE]`.
    fn end(&self, reason: Option<&str>) -> Bytes {
        let mut data = event(&self.chunk(None, Some(finish_reason(reason)))).to_vec();
        data.extend_from_slice(&sse::data_event(b"[DONE]"));
        Bytes::from(data)
    }

    /// An error event and `[DONE]`.
    fn error(&self, error: OpenAiError) -> Bytes {
        let mut data = event(&error.to_json()).to_vec();
        data.extend_from_slice(&sse::data_event(b"[DONE]"));
        Bytes::from(data)
    }
}

fn event(value: &Value) -> Bytes {
    sse::data_event(value.to_string().as_bytes())
}

/// Where a streamed answer stands.
struct Streaming {
    responses: ResponseStream,
    chunks: Chunks,
    /// The last finish reason the model gave.
    reason: Option<String>,
    done: bool,
}

impl Streaming {
    /// The events of the next response with text, or the end.
    async fn next(mut self) -> Option<(Result<Bytes, Infallible>, Self)> {
        if self.done {
            return None;
        }
        loop {
            let Some(event) = self.responses.next().await else {
                self.done = true;
                let end = self.chunks.end(self.reason.as_deref());
                return Some((Ok(end), self));
            };
            let Some(response) = event.response else {
                continue;
            };
            match response.and_then(|response| Generated::of(&response)) {
                Ok(generated) => {
                    self.reason = generated.reason.or(self.reason);
                    if !generated.text.is_empty() {
                        let text = Bytes::from(self.chunks.text(&generated.text));
                        return Some((Ok(text), self));
                    }
                }
                Err(e) => {
                    self.done = true;
                    let error = self.chunks.error(e.into());
                    return Some((Ok(error), self));
                }
            }
        }
    }
}

/// The streamed answer of `responses`. Waits for the first response, so
/// that a request that fails at once gets an error status.
pub(super) async fn respond(
    mut responses: ResponseStream,
    chunks: Chunks,
) -> OpenAiResult<Response> {
    let mut head = chunks.opening();
    let mut reason = None;
    while let Some(event) = responses.next().await {
        if let Some(response) = event.response {
            let first = Generated::of(&response?)?;
            head.extend_from_slice(&chunks.text(&first.text));
            reason = first.reason;
            break;
        }
    }
    let streaming = Streaming {
        responses,
        chunks,
        reason,
        done: false,
    };
    let events = stream::once(ready(Ok(Bytes::from(head))))
        .chain(stream::unfold(streaming, Streaming::next));
    let mut response = Response::new(Body::from_stream(events));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(endpoint: Endpoint) -> Chunks {
        Chunks {
            reply: Reply {
                endpoint,
                id: "x-1".into(),
                created: 7,
                model: "m".into(),
            },
        }
    }

    fn events(data: &[u8]) -> Vec<Value> {
        let text = std::str::from_utf8(data).unwrap();
        text.split_terminator("\n\n")
            .map(|event| {
                let payload = event.strip_prefix("data: ").unwrap();
                serde_json::from_str(payload).unwrap_or(Value::String(payload.into()))
            })
            .collect()
    }

    #[test]
    fn completion_chunks_carry_text() {
        let c = chunks(Endpoint::Completions);
        assert!(c.opening().is_empty());
        assert!(c.text("").is_empty());
        assert_eq!(
            events(&c.text("hi")),
            [
                json!({"id": "x-1", "object": "text_completion", "created": 7, "model": "m",
                "choices": [{"index": 0, "text": "hi", "logprobs": null, "finish_reason": null}]})
            ]
        );
        let end = events(&c.end(Some("length")));
        assert_eq!(end[0]["choices"][0]["finish_reason"], "length");
        assert_eq!(end[0]["choices"][0]["text"], "");
        assert_eq!(end[1], "[DONE]");
    }

    #[test]
    fn chat_chunks_carry_deltas_after_the_role() {
        let c = chunks(Endpoint::Chat);
        let opening = events(&c.opening());
        assert_eq!(opening[0]["object"], "chat.completion.chunk");
        assert_eq!(
            opening[0]["choices"][0]["delta"],
            json!({"role": "assistant", "content": ""})
        );
        assert_eq!(
            events(&c.text("hi"))[0]["choices"][0]["delta"],
            json!({"content": "hi"})
        );
        let end = events(&c.end(None));
        assert_eq!(
            end[0]["choices"][0],
            json!({"index": 0, "delta": {}, "logprobs": null, "finish_reason": "stop"})
        );
        let error = events(&c.error(OpenAiError::invalid(None, "bad")));
        assert_eq!(error[0]["error"]["message"], "bad");
        assert_eq!(error[1], "[DONE]");
    }
}
