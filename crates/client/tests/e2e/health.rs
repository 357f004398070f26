//! Health, metadata, configuration and statistics, over both protocols.

use oxiserve_client::{DataType, InferInput, InferRequest, Protocol};

use crate::support::{models::identity, server::Server};

#[tokio::test]
async fn health_metadata_config_and_statistics() {
    let server = Server::start(&[identity("identity", &[DataType::Fp32], 8)], &[]);
    for protocol in [Protocol::Http, Protocol::Grpc] {
        let client = server.client(protocol).await;
        assert!(client.is_server_live().await.unwrap());
        assert!(client.is_server_ready().await.unwrap());
        assert!(client.is_model_ready("identity", "").await.unwrap());
        assert!(client.is_model_ready("identity", "1").await.unwrap());
        assert!(!client.is_model_ready("nope", "").await.unwrap_or(false));

        let server_metadata = client.server_metadata().await.unwrap();
        assert!(!server_metadata.version.is_empty());
        assert!(
            server_metadata
                .extensions
                .iter()
                .any(|e| e == "system_shared_memory")
        );

        let metadata = client.model_metadata("identity", "").await.unwrap();
        assert_eq!(metadata.name, "identity");
        assert_eq!(metadata.versions, ["1"]);
        assert_eq!(metadata.inputs[0].name, "INPUT0");
        assert_eq!(metadata.inputs[0].datatype, "FP32");
        assert_eq!(metadata.inputs[0].shape, [-1, -1]);

        let config = client.model_config("identity", "1").await.unwrap();
        assert_eq!(
            (config.name.as_str(), config.max_batch_size),
            ("identity", 8)
        );
        assert_eq!(config.output[0].name, "OUTPUT0");

        let before = inferences(&client).await;
        let input = InferInput::from_array("INPUT0", &ndarray::arr2(&[[1.0_f32], [2.0]]));
        client
            .infer(&InferRequest::new("identity").input(input))
            .await
            .unwrap();
        // Triton counts a request a moment after answering it.
        let mut counted = inferences(&client).await;
        for _ in 0..20 {
            if counted == before + 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            counted = inferences(&client).await;
        }
        assert_eq!(counted, before + 2, "{protocol:?}");
        let all = client.model_statistics("", "").await.unwrap();
        assert!(all.model_stats.iter().any(|m| m.name == "identity"));
    }
}

async fn inferences(client: &oxiserve_client::Client) -> u64 {
    let stats = client.model_statistics("identity", "").await.unwrap();
    stats.model_stats.iter().map(|m| m.inference_count).sum()
}
