//! The repository extension in explicit mode: index, load (from the
//! repository, or with a configuration and files), unload.

use ndarray::arr2;
use oxiserve_client::{DataType, InferInput, InferRequest, Protocol};

use crate::support::{
    models::{identity, identity_py},
    server::Server,
};

const CONFIG: &str = r#"{"name": "made", "backend": "python", "max_batch_size": 4,
    "input": [{"name": "INPUT0", "data_type": "TYPE_INT64", "dims": [2]}],
    "output": [{"name": "OUTPUT0", "data_type": "TYPE_INT64", "dims": [2]}]}"#;

#[tokio::test]
async fn models_load_and_unload_on_request() {
    let flags = ["--model-control-mode=explicit"];
    let server = Server::start(&[identity("identity", &[DataType::Fp32], 8)], &flags);
    let source = identity_py();
    for protocol in [Protocol::Http, Protocol::Grpc] {
        let client = server.client(protocol).await;
        let index = client.repository_index(false).await.unwrap();
        assert!(
            index.models.iter().any(|m| m.name == "identity"),
            "{index:?}"
        );

        client.load_model("identity", None, &[]).await.unwrap();
        assert!(client.is_model_ready("identity", "").await.unwrap());
        let ready = client.repository_index(true).await.unwrap();
        assert!(
            ready
                .models
                .iter()
                .any(|m| m.name == "identity" && m.state == "READY")
        );

        let files = [("1/model.py", source.as_bytes())];
        client
            .load_model("made", Some(CONFIG), &files)
            .await
            .unwrap();
        let input = InferInput::from_array("INPUT0", &arr2(&[[7_i64, -7]]));
        let result = client
            .infer(&InferRequest::new("made").input(input))
            .await
            .unwrap();
        assert_eq!(
            result.as_array::<i64>("OUTPUT0").unwrap(),
            arr2(&[[7_i64, -7]]).into_dyn()
        );

        client.unload_model("made", false).await.unwrap();
        client.unload_model("identity", false).await.unwrap();
        assert!(!client.is_model_ready("identity", "").await.unwrap_or(false));
        let e = client.load_model("absent", None, &[]).await.unwrap_err();
        assert!(e.message().contains("absent"), "{protocol:?}: {e}");
    }
}
