//! gzip and deflate bodies, as tritonclient sends and accepts them
//! (`request_compression_algorithm`, `response_compression_algorithm`).
//! Done in the handler, not in a tower layer, so that requests that use no
//! compression (nearly all) pay nothing for it.

use std::io::{Read, Write};

use axum::http::{HeaderMap, StatusCode, header};
use bytes::Bytes;
use flate2::{
    Compression,
    read::{GzDecoder, ZlibDecoder},
    write::{GzEncoder, ZlibEncoder},
};

use crate::error::ApiError;

/// A compression scheme of HTTP bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Gzip,
    /// zlib-wrapped deflate, as HTTP's `deflate` is.
    Deflate,
}

impl Encoding {
    fn name(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Deflate => "deflate",
        }
    }
}

/// The body with its `Content-Encoding` undone; refuses encodings other than
/// gzip, deflate and identity (501, as Triton) and bodies that inflate past
/// `limit` bytes (413).
pub(crate) fn decode_request(
    headers: &HeaderMap,
    body: Bytes,
    limit: usize,
) -> Result<Bytes, ApiError> {
    let Some(encoding) = headers.get(header::CONTENT_ENCODING) else {
        return Ok(body);
    };
    let mut reader: Box<dyn Read + '_> = match encoding.as_bytes() {
        b"identity" => return Ok(body),
        b"gzip" => Box::new(GzDecoder::new(&body[..])),
        b"deflate" => Box::new(ZlibDecoder::new(&body[..])),
        _ => {
            return Err(ApiError::new(
                StatusCode::NOT_IMPLEMENTED,
                "Unsupported compression type",
            ));
        }
    };
    let mut inflated = Vec::new();
    (&mut reader)
        .take(limit as u64 + 1)
        .read_to_end(&mut inflated)
        .map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "cannot decompress the request body ({}): {e}",
                    encoding.to_str().unwrap_or("?")
                ),
            )
        })?;
    if inflated.len() > limit {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the decompressed request body is larger than the limit of {limit} bytes (--http-max-input-size)"
            ),
        ));
    }
    Ok(Bytes::from(inflated))
}

/// The encoding to answer with, from `Accept-Encoding`: gzip first, then deflate.
pub(crate) fn response_encoding(headers: &HeaderMap) -> Option<Encoding> {
    let accepted = headers.get(header::ACCEPT_ENCODING)?.to_str().ok()?;
    let offers = |name: &str| {
        accepted
            .split(',')
            .map(|part| part.split(';').next().unwrap_or("").trim())
            .any(|token| token.eq_ignore_ascii_case(name))
    };
    if offers("gzip") {
        Some(Encoding::Gzip)
    } else if offers("deflate") {
        Some(Encoding::Deflate)
    } else {
        None
    }
}

/// Compresses the response body parts into one buffer; returns it with the
/// `Content-Encoding` value.
pub(crate) fn encode_response(
    encoding: Encoding,
    parts: impl IntoIterator<Item = Bytes>,
) -> (Bytes, &'static str) {
    fn write_all<W: Write>(mut writer: W, parts: impl IntoIterator<Item = Bytes>) -> W {
        for part in parts {
            writer
                .write_all(&part)
                .expect("writing to memory cannot fail");
        }
        writer
    }
    let level = Compression::fast();
    let compressed = match encoding {
        Encoding::Gzip => write_all(GzEncoder::new(Vec::new(), level), parts).finish(),
        Encoding::Deflate => write_all(ZlibEncoder::new(Vec::new(), level), parts).finish(),
    }
    .expect("writing to memory cannot fail");
    (Bytes::from(compressed), encoding.name())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(name: header::HeaderName, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn round_trips_both_encodings() {
        let text = Bytes::from_static(br#"{"inputs": []}"#);
        for (encoding, name) in [(Encoding::Gzip, "gzip"), (Encoding::Deflate, "deflate")] {
            let (packed, header_value) = encode_response(encoding, [text.clone()]);
            assert_eq!(header_value, name);
            let h = headers(header::CONTENT_ENCODING, name);
            assert_eq!(decode_request(&h, packed, 1000).unwrap(), text);
        }
    }

    #[test]
    fn refuses_unknown_encodings_and_bombs() {
        let err =
            decode_request(&headers(header::CONTENT_ENCODING, "br"), Bytes::new(), 10).unwrap_err();
        assert_eq!(err.status, StatusCode::NOT_IMPLEMENTED);
        let (packed, _) = encode_response(Encoding::Gzip, [Bytes::from(vec![0u8; 10_000])]);
        let err =
            decode_request(&headers(header::CONTENT_ENCODING, "gzip"), packed, 100).unwrap_err();
        assert_eq!(err.status, StatusCode::PAYLOAD_TOO_LARGE);
        let err = decode_request(
            &headers(header::CONTENT_ENCODING, "gzip"),
            Bytes::from_static(b"{}"),
            100,
        )
        .unwrap_err();
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn prefers_gzip() {
        let pick = |v| response_encoding(&headers(header::ACCEPT_ENCODING, v));
        assert_eq!(pick("deflate, gzip"), Some(Encoding::Gzip));
        assert_eq!(pick("deflate;q=0.5"), Some(Encoding::Deflate));
        assert_eq!(pick("br"), None);
    }
}
