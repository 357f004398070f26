//! Sample messages and tensors shared by the protocol tests.

use std::time::Duration;

use bytes::Bytes;
use oxiserve_backend::{DirectExecution, metrics::MetricKind};
use oxiserve_types::{DataType, Error};

use crate::protocol::{
    Correlation, ExecuteRequest, FromStub, LogLevel, MetricCall, MetricOp, ModelControlCall,
    NO_BLOCK, Payload, TensorDesc, ToStub, WireRequest, WireResponse,
};

pub(super) fn tensor(name: &str, datatype: DataType, dims: &[i64], offset: u64) -> TensorDesc {
    let nbytes = datatype.element_size().unwrap_or(1) as u64 * dims.iter().product::<i64>() as u64;
    TensorDesc {
        name: name.into(),
        datatype,
        dims: dims.to_vec(),
        offset,
        nbytes,
    }
}

fn request() -> WireRequest {
    WireRequest {
        flags: 3,
        correlation: Correlation::Str("seq-é".into()),
        request_id: "req-1".into(),
        parameters_json: r#"{"a":1}"#.into(),
        timeout_us: 5_000,
        inputs: vec![
            tensor("INPUT0", DataType::Fp32, &[2, 3], 0),
            tensor("TEXT", DataType::Bytes, &[1], 64),
            tensor("EMPTY", DataType::Int64, &[0, 4], 128),
        ],
        outputs: vec!["OUT0".into(), "OUT1".into()],
    }
}

fn response() -> WireResponse {
    WireResponse {
        error: None,
        parameters_json: r#"{"p":"q"}"#.into(),
        outputs: vec![tensor("OUT", DataType::Bf16, &[4], 4096)],
    }
}

pub(super) fn to_stub_samples() -> Vec<ToStub> {
    vec![
        ToStub::Init {
            args: vec![
                ("model_config".into(), "{}".into()),
                ("model_name".into(), "add_sub".into()),
            ],
            model_file: "/models/add_sub/1/model.py".into(),
            decoupled: true,
            idle_spin_us: 300,
            lane: "/tmp/oxiserve-1/0.lane".into(),
        },
        ToStub::Execute {
            batch_id: 7,
            block: 1 << 20,
            requests: vec![
                ExecuteRequest {
                    rid: 1,
                    request: request(),
                },
                ExecuteRequest {
                    rid: 2,
                    request: WireRequest {
                        correlation: Correlation::U64(99),
                        parameters_json: "{}".into(),
                        ..WireRequest::default()
                    },
                },
            ],
        },
        ToStub::Execute {
            batch_id: 0,
            block: 0,
            requests: vec![],
        },
        ToStub::Finalize,
        ToStub::BlsResponse {
            bls_id: 3,
            is_final: true,
            response: None,
        },
        ToStub::BlsResponse {
            bls_id: 4,
            is_final: false,
            response: Some(Payload {
                block: 640,
                response: response(),
            }),
        },
        ToStub::BlsResponse {
            bls_id: 5,
            is_final: true,
            response: Some(Payload {
                block: NO_BLOCK,
                response: WireResponse {
                    error: Some(Error::not_found("no model 'x'")),
                    ..WireResponse::default()
                },
            }),
        },
        ToStub::Reply {
            call_id: 9,
            value: true,
        },
        ToStub::Release {
            offsets: vec![0, 64, 1 << 40],
        },
        ToStub::AutoComplete {
            model_file: "/m/model.py".into(),
            config_json: r#"{"name":"m"}"#.into(),
        },
        ToStub::MetricReply {
            call_id: 10,
            result: Ok(2.5),
        },
        ToStub::MetricReply {
            call_id: 11,
            result: Err(Error::internal("Invalid metric name")),
        },
        ToStub::ModelControlReply {
            call_id: 12,
            result: Ok(true),
        },
        ToStub::ModelControlReply {
            call_id: 13,
            result: Err(Error::unavailable(
                "explicit model load / unload is not allowed if polling is enabled",
            )),
        },
        ToStub::LaneOffer {
            bls_id: 14,
            path: "/tmp/oxiserve-1/0.lane".into(),
            instance: "add_sub_0_0".into(),
        },
    ]
}

pub(super) fn from_stub_samples() -> Vec<FromStub> {
    vec![
        FromStub::InitDone { error: None },
        FromStub::InitDone {
            error: Some(Error::invalid_arg("bad config")),
        },
        FromStub::ExecuteDone {
            batch_id: 11,
            batch_error: None,
            block: 192,
            responses: vec![response(), WireResponse::default()],
        },
        FromStub::ExecuteDone {
            batch_id: 12,
            batch_error: Some(Error::internal("model raised")),
            block: NO_BLOCK,
            responses: vec![],
        },
        FromStub::Send {
            rid: 5,
            is_final: true,
            failed: false,
            response: None,
        },
        FromStub::Send {
            rid: 7,
            is_final: true,
            failed: true,
            response: None,
        },
        FromStub::Send {
            rid: 6,
            is_final: false,
            failed: false,
            response: Some(Payload {
                block: 128,
                response: response(),
            }),
        },
        FromStub::Bls {
            bls_id: 8,
            decoupled: true,
            model_name: "other".into(),
            model_version: -1,
            block: 4096,
            request: request(),
            parent_rid: 3,
        },
        FromStub::BlsCancel { bls_id: 8 },
        FromStub::IsCancelled {
            call_id: 2,
            rid: 77,
        },
        FromStub::Log {
            level: LogLevel::Warning,
            file: "model.py".into(),
            line: 42,
            message: "careful".into(),
        },
        FromStub::Release {
            offsets: vec![128, 0],
        },
        FromStub::Reschedule { rids: vec![3, 9] },
        FromStub::FinalizeDone { error: None },
        FromStub::AutoCompleteDone {
            error: None,
            config_json: r#"{"max_batch_size":8}"#.into(),
        },
        FromStub::Metric(MetricCall::FamilyNew {
            call_id: 1,
            name: "requests".into(),
            description: "a counter".into(),
            kind: MetricKind::Counter,
        }),
        FromStub::Metric(MetricCall::New {
            metric_id: 2,
            family: "latency".into(),
            labels_json: r#"{"a": "b"}"#.into(),
            buckets: Some(vec![0.1, 1.0]),
        }),
        FromStub::Metric(MetricCall::New {
            metric_id: 3,
            family: "requests".into(),
            labels_json: "null".into(),
            buckets: None,
        }),
        FromStub::Metric(MetricCall::Update {
            metric_id: 2,
            op: MetricOp::Observe,
            value: -0.5,
        }),
        FromStub::Metric(MetricCall::Value {
            call_id: 4,
            metric_id: 3,
        }),
        FromStub::Metric(MetricCall::Delete { metric_id: 3 }),
        FromStub::ModelControl {
            call_id: 5,
            call: ModelControlCall::Load {
                model_name: "m".into(),
                config: r#"{"backend":"onnxruntime"}"#.into(),
                files: vec![
                    (
                        "file:1/model.onnx".into(),
                        Bytes::from_static(b"\x00onnx\xff"),
                    ),
                    ("file:2/empty".into(), Bytes::new()),
                ],
            },
        },
        FromStub::ModelControl {
            call_id: 6,
            call: ModelControlCall::Unload {
                model_name: "m".into(),
                unload_dependents: true,
            },
        },
        FromStub::ModelControl {
            call_id: 7,
            call: ModelControlCall::IsReady {
                model_name: "m".into(),
                model_version: "".into(),
            },
        },
        FromStub::LaneExecuted {
            executions: vec![
                DirectExecution {
                    compute: Duration::from_nanos(12_345),
                    failed: false,
                },
                DirectExecution {
                    compute: Duration::from_nanos(7),
                    failed: true,
                },
            ],
        },
    ]
}
