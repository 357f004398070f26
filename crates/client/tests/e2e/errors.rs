//! The server's refusals reach the caller with its message and status.

use ndarray::arr2;
use oxiserve_client::{
    DataType, Error, GrpcClient, HttpClient, InferInput, InferRequest, grpc::Code,
};

use crate::support::{models::identity, server::Server};

#[tokio::test]
async fn refusals_carry_the_servers_message_and_status() {
    let server = Server::start(&[identity("identity", &[DataType::Fp32], 8)], &[]);
    let http = HttpClient::new(&server.http).unwrap();
    let grpc = GrpcClient::connect(&server.grpc).await.unwrap();

    let unknown =
        InferRequest::new("nope").input(InferInput::from_array("INPUT0", &arr2(&[[1.0_f32]])));
    let e = http.infer(&unknown).await.unwrap_err();
    assert!(
        e.message().contains("unknown model") && e.message().contains("nope"),
        "{e}"
    );
    assert_eq!(e.http_status(), Some(404), "{e}");
    let e = grpc.infer(&unknown).await.unwrap_err();
    assert!(e.message().contains("unknown model"), "{e}");
    assert_eq!(e.grpc_code(), Some(Code::NotFound), "{e}");

    let wrong =
        InferRequest::new("identity").input(InferInput::from_array("INPUT0", &arr2(&[[1_i32]])));
    let e = http.infer(&wrong).await.unwrap_err();
    assert!(
        e.message().contains("INT32") && e.message().contains("FP32"),
        "{e}"
    );
    assert_eq!(e.http_status(), Some(400));
    let e = grpc.infer(&wrong).await.unwrap_err();
    assert_eq!(e.grpc_code(), Some(Code::InvalidArgument), "{e}");

    let e = http.model_config("nope", "").await.unwrap_err();
    assert!(
        matches!(e, Error::Http { .. }) && e.message().contains("nope"),
        "{e}"
    );
    let e = grpc.model_metadata("identity", "7").await.unwrap_err();
    assert!(
        e.grpc_code().is_some() && e.message().contains("identity"),
        "{e}"
    );

    let e = HttpClient::new("127.0.0.1:1")
        .unwrap()
        .is_server_live()
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Transport(_)), "{e}");
    assert!(GrpcClient::connect("127.0.0.1:1").await.is_err());
}
