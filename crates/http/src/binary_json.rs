//! The `binary+json` content types of the SageMaker and Vertex AI
//! endpoints (`application/vnd.sagemaker-triton.binary+json;json-header-size=N`
//! and its Vertex AI twin): on these endpoints the JSON header's length
//! comes from the `Content-Type`, not from `Inference-Header-Content-Length`,
//! and bodies are never compressed.

use axum::{
    body::{Body, Bytes},
    extract::{FromRequest, Request},
    http::{HeaderMap, HeaderValue, header},
    response::{IntoResponse, Response},
};
use oxiserve_types::Error;

use crate::{app::App, error::ApiError, handlers::infer::body_error};

/// The content type of SageMaker bodies with binary data after the JSON.
pub(crate) const SAGEMAKER_MIME: &str =
    "application/vnd.sagemaker-triton.binary+json;json-header-size=";

/// The content type of Vertex AI bodies with binary data after the JSON.
pub(crate) const VERTEX_AI_MIME: &str =
    "application/vnd.vertex-ai-triton.binary+json;json-header-size=";

/// The KServe header that carries the JSON header's length.
const HEADER_LENGTH: &str = "inference-header-content-length";

/// `request` made ready for the KServe infer route as Triton's endpoint
/// reads it: the JSON header's length from a `Content-Type` of
/// `{mime}<length>` (else the whole body), no `Content-Encoding` undone
/// and no compressed answer.
pub(crate) async fn infer_request(
    app: &App,
    request: Request,
    mime: &str,
) -> Result<Request, Response> {
    let (mut parts, body) = request.into_parts();
    // Extracted from the whole request, for the body limit it carries.
    let body = Bytes::from_request(Request::from_parts(parts.clone(), body), &())
        .await
        .map_err(|rejection| body_error(app, rejection).into_response())?;
    let headers = &mut parts.headers;
    let length = header_length(headers.get(header::CONTENT_TYPE), mime, body.len())
        .map_err(|e| ApiError::from(e).into_response())?;
    headers.remove(header::CONTENT_ENCODING);
    headers.remove(header::ACCEPT_ENCODING);
    headers.insert(HEADER_LENGTH, HeaderValue::from(length));
    Ok(Request::from_parts(parts, Body::from(body)))
}

/// Triton's reading of the header length: the number after `mime` in the
/// content type (read as C's `atoi` reads it), between 0 and the body's
/// length; the whole body when the content type is another.
pub(crate) fn header_length(
    content_type: Option<&HeaderValue>,
    mime: &str,
    content_length: usize,
) -> Result<usize, Error> {
    let Some(content_type) = content_type.and_then(|value| value.to_str().ok()) else {
        return Ok(content_length);
    };
    let Some(at) = content_type.find(mime) else {
        return Ok(content_length);
    };
    if at != 0 {
        return Err(Error::invalid_arg(format!(
            "expect MIME type for binary data starts with '{mime}', got: {content_type}"
        )));
    }
    let text = &content_type[mime.len()..];
    match usize::try_from(atoi(text)) {
        Ok(length) if length <= content_length => Ok(length),
        _ => Err(Error::invalid_arg(format!(
            "inference header size should be in range (0, {content_length}), got: {text}"
        ))),
    }
}

/// The content type of an answer with binary data after `json_length`
/// bytes of JSON.
pub(crate) fn binary_content_type(mime: &str, json_length: &str) -> Option<HeaderValue> {
    HeaderValue::try_from(format!("{mime}{json_length}")).ok()
}

/// The headers of a KServe answer with their `Inference-Header-Content-Length`
/// turned into the `{mime}<length>` content type (SageMaker's answers).
pub(crate) fn to_binary_content_type(headers: &mut HeaderMap, mime: &str) {
    let Some(length) = headers.remove(HEADER_LENGTH) else {
        return;
    };
    if let Some(value) = length
        .to_str()
        .ok()
        .and_then(|length| binary_content_type(mime, length))
    {
        headers.insert(header::CONTENT_TYPE, value);
    }
}

/// C's `atoi`: optional blanks, an optional sign, then digits up to the
/// first other character; 0 when there are none.
fn atoi(text: &str) -> i64 {
    let text = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let value = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |value, digit| {
            value
                .saturating_mul(10)
                .saturating_add(i64::from(digit - b'0'))
        });
    if negative { -value } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIME: &str = VERTEX_AI_MIME;

    fn length(content_type: &str, body: usize) -> Result<usize, Error> {
        header_length(
            Some(&HeaderValue::from_str(content_type).unwrap()),
            MIME,
            body,
        )
    }

    #[test]
    fn the_length_comes_from_the_content_type() {
        assert_eq!(length(&format!("{MIME}12"), 40).unwrap(), 12);
        assert_eq!(length("application/json", 40).unwrap(), 40);
        assert_eq!(header_length(None, MIME, 7).unwrap(), 7);
        // atoi: trailing text ignored, no digits is 0 (a raw binary request).
        assert_eq!(length(&format!("{MIME}12abc"), 40).unwrap(), 12);
        assert_eq!(length(&format!("{MIME}abc12"), 40).unwrap(), 0);
    }

    #[test]
    fn bad_lengths_are_refused_in_tritons_words() {
        assert_eq!(
            length(&format!("{MIME}-123"), 40).unwrap_err().message,
            "inference header size should be in range (0, 40), got: -123"
        );
        assert_eq!(
            length(&format!("{MIME}41"), 40).unwrap_err().message,
            "inference header size should be in range (0, 40), got: 41"
        );
        assert_eq!(
            length(&format!("x/{MIME}1"), 40).unwrap_err().message,
            format!("expect MIME type for binary data starts with '{MIME}', got: x/{MIME}1")
        );
    }

    #[test]
    fn answers_carry_the_length_in_the_content_type() {
        let mut headers = HeaderMap::new();
        headers.insert(HEADER_LENGTH, HeaderValue::from(140));
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
        to_binary_content_type(&mut headers, MIME);
        assert_eq!(headers[header::CONTENT_TYPE], format!("{MIME}140"));
        assert!(!headers.contains_key(HEADER_LENGTH));
    }
}
