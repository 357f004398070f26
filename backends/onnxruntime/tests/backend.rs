//! The backend on real ONNX Runtime (the library from the checkout's .venv,
//! which scripts/test.sh installs first) with models written by the test.

#[path = "support/onnx_file.rs"]
mod onnx_file;

use std::{path::Path, sync::Arc};

use onnx_file::{FLOAT, Io, STRING};
use oxiserve_backend::{
    AutoCompleteContext, Backend, ComputeTiming, InstanceContext, InstanceKind, Model,
    ModelContext, NoHost,
    testing::{collecting_request, conformance, fp32_data, fp32_values, infer_once},
};
use oxiserve_backend_onnxruntime::{OnnxBackend, OnnxSettings};
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelOutput},
};
use oxiserve_types::{DataType, InferRequest, Tensor, bytes_elements, encode_bytes_elements};

const TYPE_FP32: i32 = 11;
const TYPE_INT32: i32 = 8;
const TYPE_STRING: i32 = 13;

fn tensor_config(name: &str, data_type: i32, dims: &[i64]) -> (String, i32, Vec<i64>) {
    (name.to_string(), data_type, dims.to_vec())
}

fn config(
    max_batch_size: i32,
    inputs: &[(String, i32, Vec<i64>)],
    outputs: &[(String, i32, Vec<i64>)],
) -> ModelConfig {
    ModelConfig {
        name: "m".into(),
        backend: "onnxruntime".into(),
        max_batch_size,
        input: inputs
            .iter()
            .map(|(name, data_type, dims)| ModelInput {
                name: name.clone(),
                data_type: *data_type,
                dims: dims.clone(),
                ..Default::default()
            })
            .collect(),
        output: outputs
            .iter()
            .map(|(name, data_type, dims)| ModelOutput {
                name: name.clone(),
                data_type: *data_type,
                dims: dims.clone(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// `C = A + B`, FP32 `[N, 4]`.
fn write_add(dir: &Path) {
    let model = onnx_file::model(
        &[("Add", &["A", "B"], "C")],
        &[Io("A", FLOAT, &[-1, 4]), Io("B", FLOAT, &[-1, 4])],
        &[Io("C", FLOAT, &[-1, 4])],
    );
    std::fs::create_dir_all(dir.join("1")).unwrap();
    std::fs::write(dir.join("1/model.onnx"), model).unwrap();
}

fn add_config() -> ModelConfig {
    let io = |name| tensor_config(name, TYPE_FP32, &[4]);
    config(8, &[io("A"), io("B")], &[io("C")])
}

fn context(dir: &Path, config: ModelConfig) -> ModelContext {
    ModelContext {
        name: config.name.clone(),
        version: 1,
        config: Arc::new(config),
        model_path: dir.to_path_buf(),
        version_path: dir.join("1"),
        host: Arc::new(NoHost),
    }
}

fn backend() -> OnnxBackend {
    OnnxBackend::new(OnnxSettings::default())
}

fn add_request(rows: usize, base: f32) -> InferRequest {
    let a: Vec<f32> = (0..rows * 4).map(|i| base + i as f32).collect();
    let shape = vec![rows as i64, 4];
    InferRequest {
        inputs: vec![
            Tensor::new("A", DataType::Fp32, shape.clone(), fp32_data(a)),
            Tensor::new("B", DataType::Fp32, shape, fp32_data(vec![0.5; rows * 4])),
        ],
        ..Default::default()
    }
}

fn load(dir: &Path, config: ModelConfig) -> Arc<dyn Model> {
    backend().load(&context(dir, config)).unwrap()
}

fn instance(model: &dyn Model, kind: InstanceKind) -> Box<dyn oxiserve_backend::ModelInstance> {
    let context = InstanceContext {
        name: "m_0".into(),
        kind,
        device_id: 0,
    };
    model.create_instance(&context).unwrap()
}

#[test]
fn add_model_passes_the_conformance_kit() {
    let dir = tempfile::tempdir().unwrap();
    write_add(dir.path());
    let model = load(dir.path(), add_config());
    conformance::check(model.as_ref(), &add_request(2, 1.0), &["C"]);
    let response = infer_once(model.as_ref(), add_request(1, 1.0), &["C"]).unwrap();
    assert_eq!(response.outputs[0].shape, vec![1, 4]);
    assert_eq!(
        fp32_values(&response.outputs[0].data),
        vec![1.5, 2.5, 3.5, 4.5]
    );
}

#[test]
fn a_batch_is_run_once_and_split_by_request() {
    let dir = tempfile::tempdir().unwrap();
    write_add(dir.path());
    let model = load(dir.path(), add_config());
    let mut instance = instance(model.as_ref(), InstanceKind::Cpu);
    let sizes = [1usize, 3, 2];
    let (requests, collected): (Vec<_>, Vec<_>) = sizes
        .iter()
        .enumerate()
        .map(|(i, &rows)| collecting_request(add_request(rows, 100.0 * i as f32), &["C"]))
        .unzip();
    instance.execute(requests, &mut ComputeTiming::default());
    for (i, (&rows, events)) in sizes.iter().zip(&collected).enumerate() {
        let events = events.lock();
        let output = &events[0]
            .response
            .as_ref()
            .unwrap()
            .as_ref()
            .unwrap()
            .outputs[0];
        assert_eq!(output.shape, vec![rows as i64, 4]);
        let expected: Vec<f32> = (0..rows * 4)
            .map(|j| 100.0 * i as f32 + j as f32 + 0.5)
            .collect();
        assert_eq!(fp32_values(&output.data), expected, "request {i}");
    }
}

#[test]
fn strings_go_through_as_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let model = onnx_file::model(
        &[("Identity", &["TEXT"], "OUT")],
        &[Io("TEXT", STRING, &[-1, 2])],
        &[Io("OUT", STRING, &[-1, 2])],
    );
    std::fs::create_dir_all(dir.path().join("1")).unwrap();
    std::fs::write(dir.path().join("1/model.onnx"), model).unwrap();
    let c = config(
        4,
        &[tensor_config("TEXT", TYPE_STRING, &[2])],
        &[tensor_config("OUT", TYPE_STRING, &[2])],
    );
    let model = load(dir.path(), c);
    let request = InferRequest {
        inputs: vec![Tensor::new(
            "TEXT",
            DataType::Bytes,
            vec![1, 2],
            encode_bytes_elements(["héllo", ""]),
        )],
        ..Default::default()
    };
    let response = infer_once(model.as_ref(), request, &["OUT"]).unwrap();
    let out = &response.outputs[0];
    assert_eq!(out.datatype, DataType::Bytes);
    let elements = bytes_elements("OUT", &out.data, 2).unwrap();
    assert_eq!(elements, vec!["héllo".as_bytes(), b""]);
}

#[test]
fn auto_complete_reads_the_model() {
    let dir = tempfile::tempdir().unwrap();
    write_add(dir.path());
    let context = AutoCompleteContext {
        name: "m".into(),
        model_path: dir.path().to_path_buf(),
        version_path: Some(dir.path().join("1")),
    };
    let empty = ModelConfig {
        backend: "onnxruntime".into(),
        ..Default::default()
    };
    let completed = backend().auto_complete(&context, empty).unwrap();
    assert_eq!(completed.max_batch_size, 4);
    let names: Vec<&str> = completed.input.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    assert_eq!(completed.output[0].dims, vec![4]);
    assert!(completed.scheduling_choice.is_some());
}

#[test]
fn a_mismatched_config_is_refused_at_load_and_by_check() {
    let dir = tempfile::tempdir().unwrap();
    write_add(dir.path());
    let mut c = add_config();
    c.input[0].data_type = TYPE_INT32;
    let expected =
        "configuration expects datatype TYPE_INT32 for input 'A', model provides TYPE_FP32";
    let error = backend()
        .check(&context(dir.path(), c.clone()))
        .unwrap_err();
    assert!(error.message.contains(expected), "{}", error.message);
    let error = backend().load(&context(dir.path(), c)).err().unwrap();
    assert!(error.message.contains(expected), "{}", error.message);
}

#[test]
fn a_corrupt_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("1")).unwrap();
    std::fs::write(dir.path().join("1/model.onnx"), b"not a model").unwrap();
    let error = backend()
        .load(&context(dir.path(), add_config()))
        .err()
        .unwrap();
    assert!(error.message.contains("1/model.onnx"), "{}", error.message);
}

#[test]
fn a_wrong_input_size_fails_the_request_only() {
    let dir = tempfile::tempdir().unwrap();
    write_add(dir.path());
    let model = load(dir.path(), add_config());
    let mut bad = add_request(1, 0.0);
    bad.inputs[0].data = fp32_data([1.0]);
    let error = infer_once(model.as_ref(), bad, &["C"]).unwrap_err();
    assert!(error.message.contains("input 'A'"), "{}", error.message);
    infer_once(model.as_ref(), add_request(1, 0.0), &["C"]).unwrap();
}

#[test]
fn a_gpu_instance_without_cuda_in_the_library_runs_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    write_add(dir.path());
    let model = load(dir.path(), add_config());
    let mut instance = instance(model.as_ref(), InstanceKind::Gpu);
    let (request, collected) = collecting_request(add_request(1, 1.0), &["C"]);
    instance.execute(vec![request], &mut ComputeTiming::default());
    let events = collected.lock();
    let output = &events[0]
        .response
        .as_ref()
        .unwrap()
        .as_ref()
        .unwrap()
        .outputs[0];
    assert_eq!(fp32_values(&output.data), vec![1.5, 2.5, 3.5, 4.5]);
}
