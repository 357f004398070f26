//! Inline execution: a model whose instances execute inline runs a request
//! on the thread that admitted it while an instance is idle; the instance's
//! own thread creates it, drops it, and executes what finds it busy.

use std::sync::{
    atomic::{AtomicBool, Ordering},
    mpsc,
};

use oxiserve_backend::{
    BackendRequest, BackendResponse, ComputeTiming, InstanceContext, ModelInstance,
};
use parking_lot::Mutex;

use crate::common::*;

/// What happened to the instances, and on which thread.
type Log = Arc<Mutex<Vec<(&'static str, String)>>>;

/// An identity-like backend that logs where its instances are created,
/// execute and are dropped. Parameter `inline` ("true") makes the model
/// execute inline, `not_ready` its instances never ready inline,
/// `one_not_ready` the first of its instances asked never ready inline; with
/// `hold_first`, the first execution waits until the sender of
/// [`Whereabouts::held`] sends.
#[derive(Default)]
struct Whereabouts {
    log: Log,
    gate: Arc<Mutex<Option<mpsc::Receiver<()>>>>,
}

impl Whereabouts {
    /// A backend whose first held execution waits until the sender sends.
    fn held() -> (Self, mpsc::Sender<()>) {
        let (release, gate) = mpsc::channel();
        let backend = Self {
            gate: Arc::new(Mutex::new(Some(gate))),
            ..Self::default()
        };
        (backend, release)
    }

    fn events(&self, what: &str) -> Vec<String> {
        let log = self.log.lock();
        log.iter()
            .filter(|(event, _)| *event == what)
            .map(|(_, thread)| thread.clone())
            .collect()
    }
}

fn thread_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_string()
}

struct WhereaboutsModel {
    log: Log,
    gate: Option<Arc<Mutex<Option<mpsc::Receiver<()>>>>>,
    inline: bool,
    ready: bool,
    /// With `one_not_ready`: whether an instance took the not-ready part.
    unready_taken: Option<Arc<AtomicBool>>,
}

struct WhereaboutsInstance {
    log: Log,
    gate: Option<Arc<Mutex<Option<mpsc::Receiver<()>>>>>,
    ready: bool,
    unready_taken: Option<Arc<AtomicBool>>,
}

impl Backend for Whereabouts {
    fn name(&self) -> &str {
        "whereabouts"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        let parameter = |key: &str| {
            model
                .config
                .parameters
                .get(key)
                .is_some_and(|p| p.string_value == "true")
        };
        Ok(Arc::new(WhereaboutsModel {
            log: self.log.clone(),
            gate: parameter("hold_first").then(|| self.gate.clone()),
            inline: parameter("inline"),
            ready: !parameter("not_ready"),
            unready_taken: parameter("one_not_ready").then(Arc::default),
        }))
    }
}

impl Model for WhereaboutsModel {
    fn create_instance(&self, _: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        self.log.lock().push(("create", thread_name()));
        Ok(Box::new(WhereaboutsInstance {
            log: self.log.clone(),
            gate: self.gate.clone(),
            ready: self.ready,
            unready_taken: self.unready_taken.clone(),
        }))
    }

    fn executes_inline(&self) -> bool {
        self.inline
    }
}

impl ModelInstance for WhereaboutsInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        self.log.lock().push(("execute", thread_name()));
        let gate = self.gate.as_ref().and_then(|gate| gate.lock().take());
        if let Some(gate) = gate {
            gate.recv().unwrap();
        }
        timing.start_compute();
        timing.end_compute();
        for request in requests {
            let input = request.input("INPUT0").unwrap().clone();
            let output = Tensor::new("OUTPUT0", input.datatype, input.shape, input.data);
            request.sink.respond(Ok(BackendResponse::new(vec![output])));
        }
    }

    fn ready_inline(&mut self) -> bool {
        if let Some(taken) = self.unready_taken.take()
            && !taken.swap(true, Ordering::SeqCst)
        {
            self.ready = false;
        }
        self.ready
    }
}

impl Drop for WhereaboutsInstance {
    fn drop(&mut self) {
        self.log.lock().push(("drop", thread_name()));
    }
}

fn config(parameters: &[&str]) -> String {
    config_with(parameters, "")
}

/// `config(parameters)` followed by `extra` lines.
fn config_with(parameters: &[&str], extra: &str) -> String {
    let parameters: String = parameters
        .iter()
        .map(|key| format!(r#"parameters {{ key: "{key}" value: {{ string_value: "true" }} }}"#))
        .collect();
    format!(
        r#"
backend: "whereabouts"
max_batch_size: 8
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }} ]
{parameters}
{extra}
"#
    )
}

/// A server in explicit mode with `backend` and the models of `dir` loaded.
fn serve(dir: &TempDir, backend: &Arc<Whereabouts>, models: &[&str]) -> Server {
    let mut registry = backends();
    registry.register(backend.clone());
    server_with_backends(dir, registry, |c| {
        c.control_mode = ModelControlMode::Explicit;
        c.startup_models = models.iter().map(|m| m.to_string()).collect();
    })
}

/// Waits until `backend` logged `count` events `what`.
fn wait_for(backend: &Whereabouts, what: &str, count: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = backend.events(what);
        if events.len() >= count {
            return events;
        }
        assert!(Instant::now() < deadline, "no {count} '{what}' events");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends `model` three requests from this thread and checks that they were
/// answered and executed here, on the admitting thread.
async fn three_requests_execute_here(server: &Server, backend: &Whereabouts, model: &str) {
    let here = thread_name();
    for i in 0..3 {
        let response = infer(server, request(model, None, &[i as f32])).await;
        assert_eq!(values(output(&response.unwrap(), "OUTPUT0")), [i as f32]);
    }
    assert_eq!(
        backend.events("execute"),
        [here.clone(), here.clone(), here]
    );
}

#[tokio::test]
async fn an_idle_instance_of_an_inline_model_executes_on_the_admitting_thread() {
    let dir = repo(&[
        ("quick/config.pbtxt", config(&["inline"]).as_str()),
        ("quick/1/", ""),
        ("plain/config.pbtxt", config(&[]).as_str()),
        ("plain/1/", ""),
        (
            "unready/config.pbtxt",
            config(&["inline", "not_ready"]).as_str(),
        ),
        ("unready/1/", ""),
    ]);
    let backend = Arc::new(Whereabouts::default());
    let server = serve(&dir, &backend, &["quick", "plain", "unready"]);
    three_requests_execute_here(&server, &backend, "quick").await;
    // Counted as any execution is.
    let s = settled_stats(&server, "quick", 3);
    assert_eq!(s.inference_stats.success.count, 3);
    assert_eq!(s.execution_count, 3);
    assert_eq!(s.inference_count, 3);

    // A model that does not execute inline runs on its instance thread.
    let response = infer(&server, request("plain", None, &[7.0])).await;
    assert_eq!(values(output(&response.unwrap(), "OUTPUT0")), [7.0]);
    assert_eq!(backend.events("execute")[3], "inst:plain_0");
    // Nor does one whose instance is not ready inline.
    let response = infer(&server, request("unready", None, &[8.0])).await;
    assert_eq!(values(output(&response.unwrap(), "OUTPUT0")), [8.0]);
    assert_eq!(backend.events("execute")[4], "inst:unready_0");

    // Created and dropped on the instance's own thread all the same.
    for model in ["quick", "plain", "unready"] {
        server.unload_model(model).unwrap();
    }
    let mut created = backend.events("create");
    created.sort();
    let instances = ["inst:plain_0", "inst:quick_0", "inst:unready_0"];
    assert_eq!(created, instances);
    let mut dropped = wait_for(&backend, "drop", 3);
    dropped.sort();
    assert_eq!(dropped, instances);
}

#[tokio::test]
async fn an_instance_not_ready_inline_leaves_the_request_to_an_idle_one() {
    // Instance 0 or 1, whichever is asked first, holds a batch (a Python
    // process executing one, say): the other one, idle, takes the request
    // on the admitting thread instead of the queue.
    let two = "instance_group [ { count: 2 kind: KIND_CPU } ]";
    let dir = repo(&[
        (
            "pair/config.pbtxt",
            config_with(&["inline", "one_not_ready"], two).as_str(),
        ),
        ("pair/1/", ""),
    ]);
    let backend = Arc::new(Whereabouts::default());
    let server = serve(&dir, &backend, &["pair"]);
    three_requests_execute_here(&server, &backend, "pair").await;
}

#[tokio::test]
async fn a_request_that_finds_the_instance_busy_goes_to_its_thread() {
    let dir = repo(&[
        (
            "held/config.pbtxt",
            config(&["inline", "hold_first"]).as_str(),
        ),
        ("held/1/", ""),
    ]);
    let (backend, release) = Whereabouts::held();
    let backend = Arc::new(backend);
    let server = serve(&dir, &backend, &["held"]);
    // The first request executes inline on its own thread and waits there.
    let first = std::thread::Builder::new()
        .name("admitting".into())
        .spawn({
            let server = server.clone();
            move || server.infer(request("held", None, &[1.0])).unwrap()
        })
        .unwrap();
    wait_for(&backend, "execute", 1);
    // The second is queued: the instance thread executes it once the first
    // execution gives the instance back.
    let second = server.infer(request("held", None, &[2.0])).unwrap();
    release.send(()).unwrap();
    let first = first.join().unwrap().single().await.unwrap();
    assert_eq!(values(output(&first, "OUTPUT0")), [1.0]);
    let second = second.single().await.unwrap();
    assert_eq!(values(output(&second, "OUTPUT0")), [2.0]);
    assert_eq!(backend.events("execute"), ["admitting", "inst:held_0"]);
    let s = settled_stats(&server, "held", 2);
    assert_eq!(s.execution_count, 2);
    assert_eq!(server.model("held", None).unwrap().pending_requests(), 0);
}

#[tokio::test]
async fn an_ensemble_calling_one_inline_model_twice_is_answered() {
    let ensemble = r#"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
ensemble_scheduling { step [
  { model_name: "quick" model_version: -1
    input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } },
  { model_name: "quick" model_version: -1
    input_map { key: "INPUT0" value: "mid" } output_map { key: "OUTPUT0" value: "OUT" } }
] }
"#;
    let dir = repo(&[
        ("quick/config.pbtxt", config(&["inline"]).as_str()),
        ("quick/1/", ""),
        ("twice/config.pbtxt", ensemble),
        ("twice/1/", ""),
    ]);
    let backend = Arc::new(Whereabouts::default());
    let server = serve(&dir, &backend, &["quick", "twice"]);
    for i in 0..4 {
        let response = infer(
            &server,
            InferRequest {
                model_name: "twice".into(),
                inputs: vec![fp32("IN", &[1, 2], &[i as f32, 1.0])],
                ..Default::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(values(output(&response, "OUT")), [i as f32, 1.0]);
    }
    // The second step is submitted from inside the first one's execution,
    // which holds the only instance: its thread executes that step.
    let executed = backend.events("execute");
    assert_eq!(executed.len(), 8);
    assert!(
        executed.contains(&"inst:quick_0".to_string()),
        "{executed:?}"
    );
    let s = settled_stats(&server, "quick", 8);
    assert_eq!(s.inference_stats.success.count, 8);
}
