//! gRPC message framing (1-byte compressed flag, 4-byte big-endian length,
//! message) and the status a response ends with.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use hyper::HeaderMap;

/// One message as a length-prefixed gRPC frame.
pub fn encode<M: prost::Message>(message: &M) -> Bytes {
    let len = message.encoded_len();
    let mut out = BytesMut::with_capacity(5 + len);
    out.put_u8(0);
    out.put_u32(len as u32);
    message.encode(&mut out).expect("buffer has room");
    out.freeze()
}

/// Collects response data and splits it into messages.
#[derive(Debug, Default)]
pub struct Decoder {
    buffer: BytesMut,
}

impl Decoder {
    /// Adds received bytes.
    pub fn push(&mut self, data: &[u8]) {
        self.buffer.extend_from_slice(data);
    }

    /// The next whole message, if one has arrived; compressed messages are
    /// an error (the tool never asks for compression).
    pub fn next_message(&mut self) -> Result<Option<Bytes>, String> {
        if self.buffer.len() < 5 {
            return Ok(None);
        }
        if self.buffer[0] != 0 {
            return Err("the server sent a compressed message".into());
        }
        let len = u32::from_be_bytes(self.buffer[1..5].try_into().expect("4 bytes")) as usize;
        if self.buffer.len() < 5 + len {
            return Ok(None);
        }
        self.buffer.advance(5);
        Ok(Some(self.buffer.split_to(len).freeze()))
    }
}

/// The gRPC status in trailers (or headers, for trailers-only answers):
/// `None` if absent, `Some(Ok)` for OK, else the code and message.
pub fn status(headers: &HeaderMap) -> Option<Result<(), String>> {
    let code = headers.get("grpc-status")?.to_str().unwrap_or("?");
    if code == "0" {
        return Some(Ok(()));
    }
    let message = headers
        .get("grpc-message")
        .and_then(|m| m.to_str().ok())
        .map(percent_decode)
        .unwrap_or_default();
    Some(Err(format!("gRPC status {code}: {message}")))
}

/// grpc-message is percent-encoded.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::ModelMetadataRequest;
    use prost::Message;

    use super::*;

    #[test]
    fn frames_round_trip_in_pieces() {
        let request = ModelMetadataRequest {
            name: "m".into(),
            version: "2".into(),
        };
        let frame = encode(&request);
        let mut decoder = Decoder::default();
        let mut twice = frame.to_vec();
        twice.extend_from_slice(&frame);
        decoder.push(&twice[..3]);
        assert_eq!(decoder.next_message(), Ok(None));
        decoder.push(&twice[3..]);
        for _ in 0..2 {
            let message = decoder.next_message().unwrap().unwrap();
            assert_eq!(ModelMetadataRequest::decode(message).unwrap(), request);
        }
        assert_eq!(decoder.next_message(), Ok(None));
    }

    #[test]
    fn status_reads_code_and_message() {
        let mut headers = HeaderMap::new();
        assert_eq!(status(&headers), None);
        headers.insert("grpc-status", "0".parse().unwrap());
        assert_eq!(status(&headers), Some(Ok(())));
        headers.insert("grpc-status", "5".parse().unwrap());
        headers.insert("grpc-message", "no%20model%3A 'x'".parse().unwrap());
        assert_eq!(
            status(&headers),
            Some(Err("gRPC status 5: no model: 'x'".into()))
        );
    }
}
