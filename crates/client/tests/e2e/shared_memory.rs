//! System shared memory: inputs read from and outputs written into a region
//! the test creates, over both protocols.

use ndarray::arr2;
use oxiserve_client::{
    DataType, InferInput, InferRequest, InferRequestedOutput, Protocol,
    shm::SystemSharedMemoryRegion,
};

use crate::support::{models::identity, server::Server};

#[tokio::test]
async fn tensors_travel_through_a_registered_region() {
    let server = Server::start(
        &[identity("identity", &[DataType::Fp32, DataType::Bytes], 8)],
        &[],
    );
    for (i, protocol) in [Protocol::Http, Protocol::Grpc].into_iter().enumerate() {
        let client = server.client(protocol).await;
        let key = format!("/oxiserve_client_e2e_{}_{i}", std::process::id());
        let region = SystemSharedMemoryRegion::create("io", &key, 256).unwrap();
        client
            .register_system_shared_memory(region.name(), region.key(), region.byte_size(), 0)
            .await
            .unwrap();
        let status = client.system_shared_memory_status("").await.unwrap();
        assert_eq!(status.regions["io"].byte_size, 256, "{protocol:?}");

        let numbers = InferInput::from_array("INPUT0", &arr2(&[[1.0_f32, 2.0, 3.0]]));
        let strings = InferInput::from_strings("INPUT1", &arr2(&[["x", "yz"]]));
        region.write(0, numbers.data()).unwrap();
        region.write(16, strings.data()).unwrap();
        let request = InferRequest::new("identity")
            .input(numbers.with_shared_memory("io", 0))
            .input(strings.with_shared_memory("io", 16))
            .output(InferRequestedOutput::new("OUTPUT0").with_shared_memory("io", 12, 64))
            .output(InferRequestedOutput::new("OUTPUT1").with_shared_memory("io", 64, 128));
        let mut result = client.infer(&request).await.unwrap();
        assert!(result.outputs().iter().all(|t| t.data.is_empty()));
        region.read_output(&mut result, "OUTPUT0", 64).unwrap();
        region.read_output(&mut result, "OUTPUT1", 128).unwrap();
        let numbers = result.as_array::<f32>("OUTPUT0").unwrap();
        assert_eq!(
            numbers,
            arr2(&[[1.0_f32, 2.0, 3.0]]).into_dyn(),
            "{protocol:?}"
        );
        let strings = result.as_strings("OUTPUT1").unwrap();
        assert_eq!(strings.into_iter().collect::<Vec<_>>(), ["x", "yz"]);

        client.unregister_system_shared_memory("io").await.unwrap();
        let status = client.system_shared_memory_status("").await.unwrap();
        assert!(status.regions.is_empty(), "{protocol:?}");
    }
}
