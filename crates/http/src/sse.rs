//! Server-Sent Events bodies, shared by the streaming answers (generate's
//! `generate_stream`, OpenAI's `stream: true`): the content type, the
//! framing of one `data:` event, and a model's events as a stream.

use bytes::Bytes;
use futures_util::{Stream, stream};
use oxiserve_core::{ResponseStream, StreamEvent};

/// The content type of an event stream.
pub(crate) const EVENT_STREAM: &str = "text/event-stream; charset=utf-8";

/// `data: <payload>` and the blank line that ends the event.
pub(crate) fn data_event(payload: &[u8]) -> Bytes {
    let mut data = Vec::with_capacity(payload.len() + 8);
    data.extend_from_slice(b"data: ");
    data.extend_from_slice(payload);
    data.extend_from_slice(b"\n\n");
    Bytes::from(data)
}

/// The events still to come on `responses`, as a stream; dropping it drops
/// `responses`, which cancels the request.
pub(crate) fn events(responses: ResponseStream) -> impl Stream<Item = StreamEvent> {
    stream::unfold(responses, |mut responses| async move {
        let event = responses.next().await?;
        Some((event, responses))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_a_data_line_and_a_blank_line() {
        assert_eq!(&data_event(b"[DONE]")[..], b"data: [DONE]\n\n");
    }
}
