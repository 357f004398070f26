//! The backend on real TensorFlow (the library from the checkout's .venv,
//! which scripts/test.sh installs first) with a GraphDef written by the test.

#[path = "support/graph_def.rs"]
mod graph_def;

use std::{path::Path, sync::Arc};

use oxiserve_backend::{
    Backend, ComputeTiming, InstanceContext, InstanceKind, Model, ModelContext, NoHost,
    testing::{collecting_request, conformance, fp32_data, fp32_values, infer_once},
};
use oxiserve_backend_tensorflow::{TfBackend, TfSettings};
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelOutput},
};
use oxiserve_types::{DataType, InferRequest, Tensor};

fn config(input: &str, output: &str, data_type: DataType) -> ModelConfig {
    let io = |name: &str| (name.to_string(), data_type.config_number(), vec![4]);
    let inputs = [io(input), io("B")];
    let (out, out_type, out_dims) = io(output);
    ModelConfig {
        name: "add".into(),
        platform: "tensorflow_graphdef".into(),
        backend: "tensorflow".into(),
        max_batch_size: 8,
        input: inputs
            .into_iter()
            .map(|(name, data_type, dims)| ModelInput {
                name,
                data_type,
                dims,
                ..Default::default()
            })
            .collect(),
        output: vec![ModelOutput {
            name: out,
            data_type: out_type,
            dims: out_dims,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn context(dir: &Path, config: ModelConfig) -> ModelContext {
    std::fs::create_dir_all(dir.join("1")).unwrap();
    std::fs::write(
        dir.join("1/model.graphdef"),
        graph_def::add(graph_def::FLOAT),
    )
    .unwrap();
    ModelContext {
        name: config.name.clone(),
        version: 1,
        config: Arc::new(config),
        model_path: dir.to_path_buf(),
        version_path: dir.join("1"),
        host: Arc::new(NoHost),
    }
}

fn load(dir: &Path) -> Arc<dyn Model> {
    let backend = TfBackend::new(TfSettings::default());
    backend
        .load(&context(dir, config("A", "C", DataType::Fp32)))
        .unwrap()
}

fn request(rows: usize, base: f32) -> InferRequest {
    let shape = vec![rows as i64, 4];
    InferRequest {
        inputs: vec![
            Tensor::new(
                "A",
                DataType::Fp32,
                shape.clone(),
                fp32_data((0..rows * 4).map(|i| base + i as f32)),
            ),
            Tensor::new("B", DataType::Fp32, shape, fp32_data(vec![0.5; rows * 4])),
        ],
        ..Default::default()
    }
}

#[test]
fn a_graph_def_passes_the_conformance_kit() {
    let dir = tempfile::tempdir().unwrap();
    let model = load(dir.path());
    conformance::check(model.as_ref(), &request(2, 1.0), &["C"]);
    let response = infer_once(model.as_ref(), request(1, 1.0), &["C"]).unwrap();
    assert_eq!(response.outputs[0].shape, vec![1, 4]);
    assert_eq!(
        fp32_values(&response.outputs[0].data),
        vec![1.5, 2.5, 3.5, 4.5]
    );
}

#[test]
fn a_batch_is_run_once_and_split_by_request() {
    let dir = tempfile::tempdir().unwrap();
    let model = load(dir.path());
    let mut instance = model
        .create_instance(&InstanceContext {
            name: "add_0".into(),
            kind: InstanceKind::Cpu,
            device_id: 0,
        })
        .unwrap();
    let sizes = [1usize, 3, 2];
    let (requests, collected): (Vec<_>, Vec<_>) = sizes
        .iter()
        .enumerate()
        .map(|(i, &rows)| collecting_request(request(rows, 100.0 * i as f32), &["C"]))
        .unzip();
    instance.execute(requests, &mut ComputeTiming::default());
    for (i, (&rows, events)) in sizes.iter().zip(&collected).enumerate() {
        let events = events.lock();
        let response = events[0].response.as_ref().unwrap().as_ref().unwrap();
        let want: Vec<f32> = (0..rows * 4)
            .map(|k| 100.0 * i as f32 + k as f32 + 0.5)
            .collect();
        assert_eq!(response.outputs[0].shape, vec![rows as i64, 4]);
        assert_eq!(fp32_values(&response.outputs[0].data), want);
    }
}

#[test]
fn a_configuration_the_graph_does_not_fit_is_refused() {
    let backend = TfBackend::new(TfSettings::default());
    for (config, needle) in [
        (
            config("Z", "C", DataType::Fp32),
            "unexpected inference input 'Z', allowed inputs are: A, B",
        ),
        (
            config("A", "D", DataType::Fp32),
            "unexpected inference output 'D', allowed outputs are: C",
        ),
        (
            config("A", "C", DataType::Int32),
            "configuration expects datatype TYPE_INT32 for input 'A', model provides TYPE_FP32",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path(), config);
        let error = match backend.load(&context) {
            Ok(_) => panic!("{needle}: loaded"),
            Err(error) => error.message,
        };
        assert!(error.contains(needle), "{error}");
        assert!(backend.check(&context).is_err(), "{needle}");
    }
}
