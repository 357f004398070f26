//! Inference with typed tensors of every datatype: HTTP binary, HTTP JSON,
//! gRPC; request ids and parameters.

use half::{bf16, f16};
use ndarray::{ArrayD, arr1, arr2};
use oxiserve_client::{
    DataType, Element, GrpcClient, HttpClient, InferInput, InferRequest, InferRequestedOutput,
    InferResult,
};

use crate::support::{models::identity, server::Server};

/// Every datatype, in the order of the `all` model's inputs.
const ALL: [DataType; 14] = [
    DataType::Bool,
    DataType::Uint8,
    DataType::Uint16,
    DataType::Uint32,
    DataType::Uint64,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::Fp16,
    DataType::Fp32,
    DataType::Fp64,
    DataType::Bytes,
    DataType::Bf16,
];

fn all_types_request() -> InferRequest {
    InferRequest::new("all")
        .id("req-1")
        .input(InferInput::from_array("INPUT0", &arr1(&[true, false])))
        .input(InferInput::from_array("INPUT1", &arr1(&[0_u8, 255])))
        .input(InferInput::from_array("INPUT2", &arr1(&[1_u16, 65535])))
        .input(InferInput::from_array("INPUT3", &arr1(&[2_u32, u32::MAX])))
        .input(InferInput::from_array("INPUT4", &arr1(&[3_u64, u64::MAX])))
        .input(InferInput::from_array("INPUT5", &arr1(&[-4_i8, 127])))
        .input(InferInput::from_array("INPUT6", &arr1(&[-5_i16, 5])))
        .input(InferInput::from_array("INPUT7", &arr1(&[-6_i32, i32::MAX])))
        .input(InferInput::from_array("INPUT8", &arr1(&[-7_i64, i64::MIN])))
        .input(InferInput::from_array(
            "INPUT9",
            &arr1(&[f16::ONE, f16::NEG_ONE]),
        ))
        .input(InferInput::from_array("INPUT10", &arr1(&[0.5_f32, -1e30])))
        .input(InferInput::from_array("INPUT11", &arr1(&[0.25_f64, 1e300])))
        .input(InferInput::from_strings("INPUT12", &arr1(&["héllo", ""])))
        .input(InferInput::from_array(
            "INPUT13",
            &arr1(&[bf16::ONE, bf16::from_f32(-2.0)]),
        ))
}

fn same<T: Element + PartialEq + std::fmt::Debug>(
    result: &InferResult,
    i: usize,
    request: &InferRequest,
) {
    let sent = request.inputs()[i].data();
    let expected: Vec<T> = sent
        .chunks_exact(size_of::<T>())
        .map(T::from_wire)
        .collect();
    let got: ArrayD<T> = result.as_array(&format!("OUTPUT{i}")).unwrap();
    assert_eq!(got.shape(), [2]);
    assert_eq!(got.into_iter().collect::<Vec<_>>(), expected, "OUTPUT{i}");
}

fn check_all(result: &InferResult, request: &InferRequest) {
    assert_eq!((result.model_name(), result.id()), ("all", "req-1"));
    assert_eq!(result.outputs().len(), 14);
    same::<bool>(result, 0, request);
    same::<u8>(result, 1, request);
    same::<u16>(result, 2, request);
    same::<u32>(result, 3, request);
    same::<u64>(result, 4, request);
    same::<i8>(result, 5, request);
    same::<i16>(result, 6, request);
    same::<i32>(result, 7, request);
    same::<i64>(result, 8, request);
    same::<f16>(result, 9, request);
    same::<f32>(result, 10, request);
    same::<f64>(result, 11, request);
    assert_eq!(
        result
            .as_strings("OUTPUT12")
            .unwrap()
            .into_iter()
            .collect::<Vec<_>>(),
        ["héllo", ""]
    );
    same::<bf16>(result, 13, request);
}

#[tokio::test]
async fn every_datatype_round_trips_over_http_and_grpc() {
    let server = Server::start(&[identity("all", &ALL, 0)], &[]);
    let request = all_types_request();
    let http = HttpClient::new(&server.http).unwrap();
    check_all(&http.infer(&request).await.unwrap(), &request);
    let grpc = GrpcClient::connect(&server.grpc).await.unwrap();
    check_all(&grpc.infer(&request).await.unwrap(), &request);
}

#[tokio::test]
async fn json_tensors_and_chosen_outputs() {
    let types = [
        DataType::Int32,
        DataType::Fp32,
        DataType::Bytes,
        DataType::Bool,
    ];
    let server = Server::start(&[identity("mixed", &types, 4)], &[]);
    let client = HttpClient::new(&server.http).unwrap();
    let request = InferRequest::new("mixed")
        .version("1")
        .input(InferInput::from_array("INPUT0", &arr2(&[[1_i32, -2, 3]])).binary_data(false))
        .input(InferInput::from_array("INPUT1", &arr2(&[[1.5_f32]])).binary_data(false))
        .input(InferInput::from_strings("INPUT2", &arr2(&[["a", "b"]])).binary_data(false))
        .input(InferInput::from_array("INPUT3", &arr2(&[[true]])))
        .output(InferRequestedOutput::new("OUTPUT0").binary_data(false))
        .output(InferRequestedOutput::new("OUTPUT2").binary_data(false))
        .output(InferRequestedOutput::new("OUTPUT3"));
    let result = client.infer(&request).await.unwrap();
    let names: Vec<&str> = result.outputs().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["OUTPUT0", "OUTPUT2", "OUTPUT3"]);
    assert_eq!(
        result.as_array::<i32>("OUTPUT0").unwrap(),
        arr2(&[[1, -2, 3]]).into_dyn()
    );
    assert_eq!(
        result.as_strings("OUTPUT2").unwrap(),
        arr2(&[["a", "b"]]).mapv(String::from).into_dyn()
    );
    assert_eq!(
        result.as_array::<bool>("OUTPUT3").unwrap(),
        arr2(&[[true]]).into_dyn()
    );
    assert_eq!(result.model_version(), "1");
}
