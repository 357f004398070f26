//! ModelStreamInfer with a decoupled model: several responses per request,
//! errors that leave the stream open.

use ndarray::arr1;
use oxiserve_client::{Error, GrpcClient, InferInput, InferRequest, InferStream, ParameterValue};

use crate::support::{models::repeat, server::Server};

fn repeat_request(id: &str, n: i32) -> InferRequest {
    InferRequest::new("repeat")
        .id(id)
        .input(InferInput::from_array("IN", &arr1(&[n])))
        .parameter(
            "triton_enable_empty_final_response",
            ParameterValue::Bool(true),
        )
}

/// The OUT values of one request's responses, up to its final one.
async fn responses(stream: &mut InferStream, id: &str) -> Vec<i32> {
    let mut values = Vec::new();
    loop {
        let result = stream.next().await.expect("a response").expect("no error");
        assert_eq!(result.id(), id);
        if !result.outputs().is_empty() {
            values.extend(result.as_array::<i32>("OUT").unwrap());
        }
        if result.is_final() {
            return values;
        }
    }
}

#[tokio::test]
async fn decoupled_responses_stream_back() {
    let server = Server::start(&[repeat()], &[]);
    let client = GrpcClient::connect(&server.grpc).await.unwrap();
    let mut stream = client.stream_infer();
    stream.send(&repeat_request("a", 3)).unwrap();
    assert_eq!(responses(&mut stream, "a").await, [0, 1, 2]);

    stream.send(&repeat_request("b", -1)).unwrap();
    let e = stream.next().await.expect("an answer").unwrap_err();
    assert!(
        matches!(&e, Error::Stream(m) if m.contains("cannot repeat -1 times")),
        "{e}"
    );

    stream.send(&repeat_request("c", 0)).unwrap();
    stream.send(&repeat_request("d", 2)).unwrap();
    stream.close();
    assert!(responses(&mut stream, "c").await.is_empty());
    assert_eq!(responses(&mut stream, "d").await, [0, 1]);
    assert!(stream.next().await.is_none());
    assert!(stream.send(&repeat_request("e", 1)).is_err());
}
