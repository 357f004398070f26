//! A backend written in C (tests/c/), compiled with the system's C compiler
//! and loaded as the server would load it: found in the backend directory,
//! its model loaded and auto-completed, requests run through an instance,
//! its errors reported. No server: the requests' responses are collected.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
};

use bytes::Bytes;
use oxiserve_backend::{
    Backend, BackendLibraries, BackendQuery, ComputeTiming, InstanceContext, InstanceKind,
    ModelContext, ModelInstance, NoHost,
    testing::{Collected, collecting_request, fp32_values},
};
use oxiserve_backend_capi::{CapiLibraries, CapiSettings};
use oxiserve_config::from_json;
use oxiserve_proto::ModelConfig;
use oxiserve_types::{DataType, ErrorKind, InferRequest, ParameterValue, Tensor};
use tempfile::TempDir;

/// A repository folder and a backend directory holding the test backends.
struct Setup {
    dir: TempDir,
    libraries: CapiLibraries,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let backends = dir.path().join("backends");
        compile("add_one.c", &backends.join("add_one/libtriton_add_one.so"));
        compile(
            "undefined_symbol.c",
            &backends.join("undefined/libtriton_undefined.so"),
        );
        compile(
            "no_execute.c",
            &backends.join("no_execute/libtriton_no_execute.so"),
        );
        let libraries = CapiLibraries::new(CapiSettings {
            backend_directory: backends,
            ..CapiSettings::default()
        });
        Self { dir, libraries }
    }

    fn model_path(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join("repo").join(name);
        std::fs::create_dir_all(path.join("1")).unwrap();
        path
    }

    fn backend(&self, backend: &str, model: &str) -> oxiserve_types::Result<Arc<dyn Backend>> {
        let model_path = self.model_path(model);
        let version_path = model_path.join("1");
        let query = BackendQuery {
            backend,
            runtime: "",
            model_name: model,
            model_path: &model_path,
            version_path: Some(&version_path),
        };
        self.libraries
            .find(&query)
            .map(|found| found.expect("the loader provides every backend name"))
    }

    fn load(
        &self,
        name: &str,
        config: ModelConfig,
    ) -> oxiserve_types::Result<Arc<dyn oxiserve_backend::Model>> {
        let model_path = self.model_path(name);
        self.backend("add_one", name)?.load(&ModelContext {
            name: name.into(),
            version: 1,
            config: Arc::new(config),
            version_path: model_path.join("1"),
            model_path,
            host: Arc::new(NoHost),
        })
    }
}

/// Compiles tests/c/`source` into `library`, with the declarations and
/// helpers the end-to-end tests' C backends share (tests/backends/c_api/).
fn compile(source: &str, library: &Path) {
    std::fs::create_dir_all(library.parent().unwrap()).unwrap();
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = crate_dir.join("tests/c").join(source);
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-Wall", "-Werror", "-I"])
        .arg(crate_dir.join("../../tests/backends/c_api"))
        .arg("-o")
        .arg(library)
        .arg(&source)
        .status()
        .unwrap();
    assert!(status.success(), "cc failed on {}", source.display());
}

fn config(name: &str, more: &str) -> ModelConfig {
    from_json(&format!(
        r#"{{"name":"{name}","backend":"add_one","max_batch_size":8,
            "input":[{{"name":"IN","data_type":"TYPE_FP32","dims":[-1]}}],
            "output":[{{"name":"OUT","data_type":"TYPE_FP32","dims":[-1]}}]{more}}}"#
    ))
    .unwrap()
}

fn request(values: &[f32]) -> InferRequest {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    InferRequest {
        model_name: "m".into(),
        id: "r1".into(),
        inputs: vec![Tensor::new(
            "IN",
            DataType::Fp32,
            vec![1, values.len() as i64],
            Bytes::from(data),
        )],
        ..Default::default()
    }
}

fn instance(model: &dyn oxiserve_backend::Model) -> Box<dyn ModelInstance> {
    model
        .create_instance(&InstanceContext {
            name: "m_0".into(),
            kind: InstanceKind::Cpu,
            device_id: 0,
        })
        .unwrap()
}

/// Runs `requests` as one batch; what each request received.
fn run(instance: &mut dyn ModelInstance, requests: Vec<InferRequest>) -> Vec<Collected> {
    let (batch, collected): (Vec<_>, Vec<_>) = requests
        .into_iter()
        .map(|r| collecting_request(r, &["OUT"]))
        .unzip();
    instance.execute(batch, &mut ComputeTiming::default());
    collected
}

#[test]
fn a_batch_runs_through_the_library_and_each_request_gets_its_response() {
    let setup = Setup::new();
    let model = setup.load("m", config("m", "")).unwrap();
    let mut instance = instance(model.as_ref());
    let mut tagged = request(&[5.0]);
    tagged
        .parameters
        .insert("tag".into(), ParameterValue::String("t1".into()));
    let collected = run(instance.as_mut(), vec![request(&[1.0, 2.0]), tagged]);
    for (received, expected) in collected.iter().zip([vec![2.0, 3.0], vec![6.0]]) {
        let events = received.lock();
        assert_eq!(events.len(), 1);
        assert!(events[0].is_final);
        let response = events[0].response.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(response.outputs[0].name, "OUT");
        assert_eq!(response.outputs[0].shape, vec![1, expected.len() as i64]);
        assert_eq!(fp32_values(&response.outputs[0].data), expected);
        assert_eq!(response.parameters["batch"], ParameterValue::Int(2));
        let backend_config = response.parameters["backend_config"].as_str().unwrap();
        assert!(
            backend_config.starts_with(r#"{"cmdline":{"auto-complete-config":"true","#),
            "{backend_config}"
        );
    }
    let tag = collected[1].lock()[0]
        .response
        .as_ref()
        .unwrap()
        .as_ref()
        .unwrap()
        .parameters["tag"]
        .clone();
    assert_eq!(tag, ParameterValue::String("t1".into()));
}

#[test]
fn an_error_response_reaches_its_request_only() {
    let setup = Setup::new();
    let model = setup.load("m", config("m", "")).unwrap();
    let mut instance = instance(model.as_ref());
    let collected = run(instance.as_mut(), vec![request(&[-1.0]), request(&[1.0])]);
    let failed = collected[0].lock();
    let error = failed[0].response.as_ref().unwrap().as_ref().unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ErrorKind::InvalidArg, "negative input")
    );
    assert!(failed[0].fails_request);
    assert!(collected[1].lock()[0].response.as_ref().unwrap().is_ok());
}

#[test]
fn a_decoupled_model_answers_from_a_response_factory() {
    let setup = Setup::new();
    let decoupled = config("m", r#","model_transaction_policy":{"decoupled":true}"#);
    let model = setup.load("m", decoupled).unwrap();
    let mut instance = instance(model.as_ref());
    let collected = run(instance.as_mut(), vec![request(&[1.0])]);
    let events = collected[0].lock();
    assert_eq!(events.len(), 3);
    for event in &events[..2] {
        assert!(!event.is_final);
        let response = event.response.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(fp32_values(&response.outputs[0].data), vec![2.0]);
    }
    assert!(events[2].is_final && events[2].response.is_none());
}

#[test]
fn a_state_the_library_updates_goes_out_with_the_response() {
    let setup = Setup::new();
    let sequence = r#","sequence_batching":{"state":[{"input_name":"STATE_IN",
        "output_name":"STATE_OUT","data_type":"TYPE_FP32","dims":[1]}]}"#;
    let model = setup.load("m", config("m", sequence)).unwrap();
    let mut instance = instance(model.as_ref());
    let mut with_state = request(&[2.0]);
    with_state.inputs.push(Tensor::new(
        "STATE_IN",
        DataType::Fp32,
        vec![1, 1],
        Bytes::copy_from_slice(&5.0_f32.to_le_bytes()),
    ));
    let collected = run(instance.as_mut(), vec![with_state]);
    let events = collected[0].lock();
    let response = events[0].response.as_ref().unwrap().as_ref().unwrap();
    let outputs: Vec<(&str, Vec<f32>)> = response
        .outputs
        .iter()
        .map(|t| (t.name.as_str(), fp32_values(&t.data)))
        .collect();
    assert_eq!(outputs, [("OUT", vec![7.0]), ("STATE_OUT", vec![7.0])]);
}

#[test]
fn auto_complete_takes_the_configuration_the_library_sets() {
    let setup = Setup::new();
    let bare = from_json(r#"{"name":"m","backend":"add_one"}"#).unwrap();
    let model_path = setup.model_path("m");
    let completed = setup
        .backend("add_one", "m")
        .unwrap()
        .auto_complete(
            &oxiserve_backend::AutoCompleteContext {
                name: "m".into(),
                version_path: Some(model_path.join("1")),
                model_path,
            },
            bare,
        )
        .unwrap();
    assert_eq!(completed.max_batch_size, 8);
    assert_eq!(completed.input[0].name, "IN");
    assert_eq!(completed.output[0].name, "OUT");
}

#[test]
fn a_failing_model_initialize_names_the_model_the_library_and_the_backend_s_message() {
    let setup = Setup::new();
    let Err(err) = setup.load("fail_init", config("fail_init", "")) else {
        panic!("loaded");
    };
    assert_eq!(err.kind, ErrorKind::InvalidArg);
    let library = setup
        .dir
        .path()
        .join("backends/add_one/libtriton_add_one.so");
    assert_eq!(
        err.message,
        format!(
            "model 'fail_init' (backend library {}): TRITONBACKEND_ModelInitialize: model \
             'fail_init' refuses to load",
            library.display()
        )
    );
}

#[test]
fn a_failing_execute_fails_each_request_with_the_backend_s_message() {
    let setup = Setup::new();
    let model = setup.load("exec_fail", config("exec_fail", "")).unwrap();
    let mut instance = instance(model.as_ref());
    let collected = run(instance.as_mut(), vec![request(&[1.0]), request(&[2.0])]);
    for received in collected {
        let events = received.lock();
        assert_eq!(events.len(), 1);
        let error = events[0].response.as_ref().unwrap().as_ref().unwrap_err();
        assert_eq!(
            (error.kind, error.message.as_str()),
            (ErrorKind::Internal, "execute failed on purpose")
        );
    }
}

#[test]
fn a_request_never_released_is_answered_with_an_error_when_the_instance_goes() {
    let setup = Setup::new();
    let model = setup.load("hold", config("hold", "")).unwrap();
    let mut instance = instance(model.as_ref());
    let collected = run(instance.as_mut(), vec![request(&[1.0])]);
    assert!(collected[0].lock().is_empty(), "held, not answered yet");
    drop(instance);
    let events = collected[0].lock();
    assert_eq!(events.len(), 1);
    assert!(events[0].is_final);
    assert!(events[0].response.as_ref().unwrap().is_err());
}

#[test]
fn a_missing_library_is_reported_as_triton_reports_it() {
    let setup = Setup::new();
    let Err(err) = setup.backend("nowhere", "m") else {
        panic!("found");
    };
    assert!(
        err.message.starts_with(
            "unable to find backend library for backend 'nowhere', try specifying runtime on the \
             model configuration. Searched for libtriton_nowhere.so in: "
        ),
        "{err}"
    );
}

#[test]
fn a_library_needing_an_unknown_function_fails_with_the_loader_s_words() {
    let setup = Setup::new();
    let Err(err) = setup.backend("undefined", "m") else {
        panic!("found");
    };
    assert!(
        err.message.starts_with("model 'm' (backend library "),
        "{err}"
    );
    assert!(
        err.message.contains("unable to load shared library: ")
            && err
                .message
                .contains("undefined symbol: TRITONBACKEND_NoSuchFunction"),
        "{err}"
    );
}

#[test]
fn a_library_without_execute_is_refused() {
    let setup = Setup::new();
    let Err(err) = setup.backend("no_execute", "m") else {
        panic!("found");
    };
    assert!(
        err.message.contains(
            "unable to find required entrypoint 'TRITONBACKEND_ModelInstanceExecute' in shared \
             library"
        ),
        "{err}"
    );
}
