//! Errors as OpenAI words them: `{"error": {"message", "type", "param",
//! "code"}}` with the HTTP status of the failure.

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use oxiserve_types::Error;
use serde_json::{Value, json};

use crate::error::{ApiError, status_for};

/// An error on its way to an OpenAI client.
#[derive(Debug)]
pub(crate) struct OpenAiError {
    pub status: StatusCode,
    pub message: String,
    /// The request member at fault, if one is.
    pub param: Option<String>,
    /// A machine-readable code (`model_not_found`), if there is one.
    pub code: Option<&'static str>,
}

impl OpenAiError {
    /// 400: the request is wrong in `param` (if one member is to blame).
    pub fn invalid(param: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            param: param.map(str::to_string),
            code: None,
        }
    }

    /// 500: the server, or the model's configuration, is at fault.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            param: None,
            code: None,
        }
    }

    /// 404: no ready model is called `model`.
    pub fn model_not_found(model: &str, why: &str) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            message: format!("The model '{model}' does not exist or is not ready: {why}"),
            param: Some("model".to_string()),
            code: Some("model_not_found"),
        }
    }

    /// OpenAI's error type for the status: `invalid_request_error` for the
    /// client's errors, `server_error` for the server's.
    fn kind(&self) -> &'static str {
        if self.status.is_server_error() {
            "server_error"
        } else {
            "invalid_request_error"
        }
    }

    /// The error object, as a body or a streamed event carries it.
    pub fn to_json(&self) -> Value {
        json!({
            "error": {
                "message": self.message,
                "type": self.kind(),
                "param": self.param,
                "code": self.code,
            }
        })
    }
}

/// An inference error, with the status the KServe endpoints give it.
impl From<Error> for OpenAiError {
    fn from(e: Error) -> Self {
        Self {
            status: status_for(e.kind),
            message: e.message,
            param: None,
            code: None,
        }
    }
}

/// An error of the HTTP layer (a body over the size limit).
impl From<ApiError> for OpenAiError {
    fn from(e: ApiError) -> Self {
        Self {
            status: e.status,
            message: e.message,
            param: None,
            code: None,
        }
    }
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            self.to_json().to_string(),
        )
            .into_response()
    }
}

/// A handler's result.
pub(crate) type OpenAiResult<T> = Result<T, OpenAiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_have_openai_shape() {
        let error = OpenAiError::invalid(Some("n"), "only n=1 is supported");
        assert_eq!(
            error.to_json(),
            json!({"error": {"message": "only n=1 is supported",
                "type": "invalid_request_error", "param": "n", "code": null}})
        );
        let error = OpenAiError::from(Error::internal("boom"));
        assert_eq!(error.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(error.to_json()["error"]["type"], "server_error");
        let error = OpenAiError::model_not_found("m", "unknown");
        assert_eq!(error.status, StatusCode::NOT_FOUND);
        assert_eq!(error.to_json()["error"]["code"], "model_not_found");
    }
}
