//! Which ensemble steps can run: a plain state over the step graph, with no
//! threads and no models, so that the execution order is unit-tested.
//! Decoupled steps make several iterations of their outputs (see [`State`]).
//!
//! As in Triton, a tensor may be absent: an optional ensemble input the
//! request left out, or a step output its step did not produce. A step whose
//! inputs all exist, present or absent, runs without its absent ones (their
//! model inputs must be optional, else its model refuses the request), and
//! an absent requested output is left out of the response.

use std::collections::{BTreeMap, HashMap, HashSet};

use oxiserve_proto::{
    ModelConfig,
    inference::{model_config::SchedulingChoice, model_ensembling::Step},
};
use oxiserve_types::Tensor;

/// One ensemble step: its model and how its tensors map to the ensemble's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StepPlan {
    pub model_name: String,
    /// `None` for the latest version (`model_version: -1`).
    pub model_version: Option<i64>,
    /// (model input, ensemble tensor), sorted by model input.
    pub inputs: Vec<(String, String)>,
    /// (model output, ensemble tensor), sorted by model output.
    pub outputs: Vec<(String, String)>,
}

impl StepPlan {
    fn new(step: &Step) -> Self {
        let mut inputs: Vec<_> = step
            .input_map
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut outputs: Vec<_> = step
            .output_map
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        inputs.sort();
        outputs.sort();
        Self {
            model_name: step.model_name.clone(),
            model_version: (step.model_version >= 0).then_some(step.model_version),
            inputs,
            outputs,
        }
    }
}

/// An ensemble's steps, in configuration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub steps: Vec<StepPlan>,
    /// The ensemble's optional inputs: absent when a request leaves them out.
    pub optional_inputs: Vec<String>,
}

impl Plan {
    /// The steps of an ensemble configuration (validated at load).
    pub fn from_config(config: &ModelConfig) -> Self {
        let steps = match &config.scheduling_choice {
            Some(SchedulingChoice::EnsembleScheduling(e)) => {
                e.step.iter().map(StepPlan::new).collect()
            }
            _ => Vec::new(),
        };
        let optional_inputs = config
            .input
            .iter()
            .filter(|i| i.optional)
            .map(|i| i.name.clone())
            .collect();
        Self {
            steps,
            optional_inputs,
        }
    }
}

/// A step whose inputs all exist for one iteration: its index and its
/// model's present inputs, named as the model names them (the data is
/// shared, not copied).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadyStep {
    pub index: usize,
    pub inputs: Vec<Tensor>,
}

/// The values of one ensemble tensor, by iteration. A tensor a decoupled
/// step produces gets one iteration per response; the others have only
/// iteration 0 (Triton's `TensorData`).
#[derive(Debug, Default)]
struct Iterations {
    /// `None`: absent in that iteration.
    values: BTreeMap<usize, Option<Tensor>>,
    next: usize,
}

impl Iterations {
    fn add(&mut self, value: Option<Tensor>) {
        self.values.insert(self.next, value);
        self.next += 1;
    }
}

/// One request's progress through the graph: the tensors produced so far
/// and which step runs were started and have finished.
///
/// As in Triton, a step runs once per iteration for which all its inputs
/// have a value, so each response of a decoupled step flows through the
/// later steps on its own, and the ensemble's outputs are complete once per
/// iteration.
#[derive(Debug)]
pub(crate) struct State {
    tensors: HashMap<String, Iterations>,
    /// (step, iteration) runs started.
    started: HashSet<(usize, usize)>,
    running: usize,
    /// The next iteration of the ensemble outputs to answer with.
    answered: usize,
}

impl State {
    /// A request with the ensemble inputs `inputs`; the optional inputs it
    /// leaves out are absent.
    pub fn new(plan: &Plan, inputs: Vec<Tensor>) -> Self {
        let mut tensors: HashMap<String, Iterations> = HashMap::new();
        for input in inputs {
            tensors
                .entry(input.name.clone())
                .or_default()
                .add(Some(input));
        }
        for name in &plan.optional_inputs {
            tensors.entry(name.clone()).or_insert_with(|| {
                let mut absent = Iterations::default();
                absent.add(None);
                absent
            });
        }
        Self {
            tensors,
            started: HashSet::new(),
            running: 0,
            answered: 0,
        }
    }

    /// Marks started and returns every step run not yet started whose
    /// inputs all have a value in its iteration.
    pub fn take_ready(&mut self, plan: &Plan) -> Vec<ReadyStep> {
        let mut ready = Vec::new();
        for (index, step) in plan.steps.iter().enumerate() {
            let Some((_, first)) = step.inputs.first() else {
                continue;
            };
            let Some(candidates) = self.tensors.get(first) else {
                continue;
            };
            let iterations: Vec<usize> = candidates
                .values
                .keys()
                .copied()
                .filter(|&i| !self.started.contains(&(index, i)))
                .filter(|&i| {
                    step.inputs.iter().all(|(_, tensor)| {
                        self.tensors
                            .get(tensor)
                            .is_some_and(|t| t.values.contains_key(&i))
                    })
                })
                .collect();
            for iteration in iterations {
                let inputs = step
                    .inputs
                    .iter()
                    .filter_map(|(model_input, tensor)| {
                        let present = self.tensors.get(tensor)?.values.get(&iteration)?.as_ref()?;
                        Some(Tensor {
                            name: model_input.clone(),
                            ..present.clone()
                        })
                    })
                    .collect();
                self.started.insert((index, iteration));
                self.running += 1;
                ready.push(ReadyStep { index, inputs });
            }
        }
        ready
    }

    /// One response of step `index` with these outputs (named as its model
    /// names them): those in its output map become the next iteration of
    /// their ensemble tensors, and those of its output map it did not
    /// produce are absent in it.
    pub fn respond(&mut self, plan: &Plan, index: usize, mut outputs: Vec<Tensor>) {
        for (model_output, tensor) in &plan.steps[index].outputs {
            let value = outputs
                .iter()
                .position(|o| o.name == *model_output)
                .map(|at| {
                    let output = outputs.swap_remove(at);
                    Tensor {
                        name: tensor.clone(),
                        ..output
                    }
                });
            self.tensors.entry(tensor.clone()).or_default().add(value);
        }
    }

    /// A step run sent its final flag.
    pub fn finish(&mut self) {
        self.running = self.running.saturating_sub(1);
    }

    /// Whether nothing runs any more; call after [`State::take_ready`].
    pub fn is_idle(&self) -> bool {
        self.running == 0
    }

    /// The ensemble outputs `names` of the next iteration not answered yet,
    /// once each has a value there (absent ones left out); the iteration
    /// then counts as answered.
    pub fn take_answer(&mut self, names: &[String]) -> Option<Vec<Tensor>> {
        let iteration = self.answered;
        if names.is_empty() && iteration > 0 {
            return None;
        }
        let mut outputs = Vec::with_capacity(names.len());
        for name in names {
            if let Some(present) = self.tensors.get(name)?.values.get(&iteration)? {
                outputs.push(present.clone());
            }
        }
        self.answered += 1;
        Some(outputs)
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use oxiserve_types::DataType;

    use super::*;

    fn step(model: &str, inputs: &[(&str, &str)], outputs: &[(&str, &str)]) -> StepPlan {
        let pairs = |p: &[(&str, &str)]| {
            p.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        StepPlan {
            model_name: model.into(),
            model_version: None,
            inputs: pairs(inputs),
            outputs: pairs(outputs),
        }
    }

    fn tensor(name: &str, data: &'static [u8]) -> Tensor {
        Tensor::new(
            name,
            DataType::Uint8,
            vec![data.len() as i64],
            Bytes::from_static(data),
        )
    }

    impl State {
        /// A step run's one response and its final flag.
        fn finish_with(&mut self, plan: &Plan, index: usize, outputs: Vec<Tensor>) {
            self.respond(plan, index, outputs);
            self.finish();
        }

        /// Iteration 0 of the ensemble tensor `name`: `Some(None)` when it
        /// is absent, `None` while nothing produced it.
        fn tensor(&self, name: &str) -> Option<Option<&Tensor>> {
            self.tensors.get(name)?.values.get(&0).map(Option::as_ref)
        }
    }

    fn indices(ready: &[ReadyStep]) -> Vec<usize> {
        ready.iter().map(|r| r.index).collect()
    }

    /// Seed 002's shape: preprocess feeds two models; seed 000's: a chain.
    fn fan_out() -> Plan {
        Plan {
            steps: vec![
                step("left", &[("X", "pre")], &[("Y", "left_out")]),
                step("pre", &[("RAW", "input")], &[("OUT", "pre")]),
                step("right", &[("X", "pre")], &[("Y", "right_out")]),
            ],
            optional_inputs: Vec::new(),
        }
    }

    #[test]
    fn a_step_starts_once_its_inputs_exist() {
        let plan = fan_out();
        let mut state = State::new(&plan, vec![tensor("input", b"abc")]);
        let first = state.take_ready(&plan);
        assert_eq!(indices(&first), vec![1]);
        assert_eq!(first[0].inputs[0].name, "RAW");
        assert!(state.take_ready(&plan).is_empty(), "a step starts once");
        assert!(!state.is_idle());
        state.finish_with(&plan, 1, vec![tensor("OUT", b"pp")]);
        let second = state.take_ready(&plan);
        assert_eq!(
            indices(&second),
            vec![0, 2],
            "independent steps start together"
        );
        assert!(second.iter().all(|r| r.inputs[0].name == "X"));
        state.finish_with(&plan, 2, vec![tensor("Y", b"r")]);
        assert!(!state.is_idle());
        state.finish_with(&plan, 0, vec![tensor("Y", b"l")]);
        assert!(state.take_ready(&plan).is_empty());
        assert!(state.is_idle());
        assert_eq!(
            state.tensor("left_out").flatten().unwrap().data,
            Bytes::from_static(b"l")
        );
        assert_eq!(
            state.tensor("right_out").flatten().unwrap().name,
            "right_out"
        );
    }

    #[test]
    fn tensors_are_shared_not_copied() {
        let plan = fan_out();
        let mut state = State::new(&plan, vec![tensor("input", b"abc")]);
        state.take_ready(&plan);
        let produced = tensor("OUT", b"shared");
        let pointer = produced.data.as_ptr();
        state.finish_with(&plan, 1, vec![produced]);
        for ready in state.take_ready(&plan) {
            assert_eq!(ready.inputs[0].data.as_ptr(), pointer);
        }
    }

    #[test]
    fn unmapped_outputs_are_dropped_and_missing_inputs_stall() {
        let plan = Plan {
            steps: vec![
                step("a", &[("X", "input")], &[("Y", "mid")]),
                step("b", &[("X", "mid"), ("Z", "never")], &[("Y", "out")]),
            ],
            optional_inputs: Vec::new(),
        };
        let mut state = State::new(&plan, vec![tensor("input", b"1")]);
        assert_eq!(indices(&state.take_ready(&plan)), vec![0]);
        state.finish_with(&plan, 0, vec![tensor("Y", b"2"), tensor("EXTRA", b"3")]);
        assert!(state.tensor("EXTRA").is_none());
        assert!(state.tensor("mid").flatten().is_some());
        assert!(state.take_ready(&plan).is_empty());
        assert!(state.is_idle(), "nothing can run: the request ends");
        assert!(state.tensor("out").is_none());
    }

    /// Triton's qa `optional_connecting_tensor`: two steps of a model whose
    /// two inputs are optional, the first step's outputs feeding the second.
    fn connecting() -> Plan {
        Plan {
            steps: vec![
                step(
                    "optional_identity",
                    &[("INPUT0", "INPUT0"), ("INPUT1", "INPUT1")],
                    &[("OUTPUT0", "internal0"), ("OUTPUT1", "internal1")],
                ),
                step(
                    "optional_identity",
                    &[("INPUT0", "internal0"), ("INPUT1", "internal1")],
                    &[("OUTPUT0", "OUTPUT0"), ("OUTPUT1", "OUTPUT1")],
                ),
            ],
            optional_inputs: vec!["INPUT0".into(), "INPUT1".into()],
        }
    }

    fn names(ready: &ReadyStep) -> Vec<&str> {
        ready.inputs.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn absent_tensors_let_steps_run_without_them() {
        let plan = connecting();
        let mut state = State::new(&plan, vec![tensor("INPUT0", b"3")]);
        let first = state.take_ready(&plan);
        assert_eq!(
            indices(&first),
            vec![0],
            "the left-out optional input is absent"
        );
        assert_eq!(names(&first[0]), ["INPUT0"]);
        state.finish_with(&plan, 0, vec![tensor("OUTPUT0", b"3")]);
        let second = state.take_ready(&plan);
        assert_eq!(
            indices(&second),
            vec![1],
            "the output not produced is absent"
        );
        assert_eq!(names(&second[0]), ["INPUT0"]);
        state.finish_with(&plan, 1, vec![tensor("OUTPUT0", b"3")]);
        assert!(state.take_ready(&plan).is_empty() && state.is_idle());
        assert!(state.tensor("OUTPUT0").flatten().is_some());
        assert_eq!(state.tensor("OUTPUT1"), Some(None), "absent, not missing");
    }

    #[test]
    fn a_produced_tensor_is_not_made_absent() {
        let plan = connecting();
        let inputs = vec![tensor("INPUT0", b"3"), tensor("INPUT1", b"4")];
        let mut state = State::new(&plan, inputs);
        state.take_ready(&plan);
        state.finish_with(
            &plan,
            0,
            vec![tensor("OUTPUT1", b"4"), tensor("OUTPUT0", b"3")],
        );
        let second = state.take_ready(&plan);
        assert_eq!(names(&second[0]), ["INPUT0", "INPUT1"]);
    }

    /// An LLM pipeline: a tokenizer, a decoupled model that streams, and a
    /// detokenizer run once per streamed response.
    fn pipeline() -> Plan {
        Plan {
            steps: vec![
                step("tokenize", &[("TEXT", "prompt")], &[("IDS", "ids")]),
                step("generate", &[("IDS", "ids")], &[("TOKEN", "token")]),
                step("detokenize", &[("TOKEN", "token")], &[("TEXT", "text")]),
            ],
            optional_inputs: Vec::new(),
        }
    }

    #[test]
    fn each_response_of_a_decoupled_step_flows_on_alone() {
        let plan = pipeline();
        let text = vec!["text".to_string()];
        let mut state = State::new(&plan, vec![tensor("prompt", b"hi")]);
        assert_eq!(indices(&state.take_ready(&plan)), vec![0]);
        state.finish_with(&plan, 0, vec![tensor("IDS", b"12")]);
        assert_eq!(indices(&state.take_ready(&plan)), vec![1]);
        state.respond(&plan, 1, vec![tensor("TOKEN", b"a")]);
        let first = state.take_ready(&plan);
        assert_eq!(indices(&first), vec![2]);
        assert_eq!(first[0].inputs[0].data, Bytes::from_static(b"a"));
        state.respond(&plan, 1, vec![tensor("TOKEN", b"b")]);
        let second = state.take_ready(&plan);
        assert_eq!(second[0].inputs[0].data, Bytes::from_static(b"b"));
        state.finish();
        assert!(
            state.take_answer(&text).is_none(),
            "nothing detokenized yet"
        );
        state.finish_with(&plan, 2, vec![tensor("TEXT", b"A")]);
        let answer = state.take_answer(&text).unwrap();
        assert_eq!(answer[0].data, Bytes::from_static(b"A"));
        assert!(state.take_answer(&text).is_none());
        assert!(!state.is_idle());
        state.finish_with(&plan, 2, vec![tensor("TEXT", b"B")]);
        assert_eq!(state.take_answer(&text).unwrap()[0].name, "text");
        assert!(state.take_ready(&plan).is_empty() && state.is_idle());
        assert_eq!(state.answered, 2);
    }

    #[test]
    fn a_decoupled_step_may_send_nothing() {
        let plan = pipeline();
        let mut state = State::new(&plan, vec![tensor("prompt", b"hi")]);
        state.take_ready(&plan);
        state.finish_with(&plan, 0, vec![tensor("IDS", b"12")]);
        state.take_ready(&plan);
        state.finish();
        assert!(state.take_ready(&plan).is_empty() && state.is_idle());
        assert!(state.take_answer(&["text".to_string()]).is_none());
        assert_eq!(state.answered, 0);
    }

    #[test]
    fn plan_reads_versions_and_maps() {
        let text = r#"
            name: "e" platform: "ensemble"
            ensemble_scheduling { step [
              { model_name: "m" model_version: -1 input_map { key: "B" value: "t2" }
                input_map { key: "A" value: "t1" } output_map { key: "O" value: "o" } },
              { model_name: "n" model_version: 3 input_map { key: "I" value: "o" }
                output_map { key: "O" value: "p" } }
            ] }"#;
        let config = oxiserve_config::parse_config(text, std::path::Path::new("config.pbtxt"))
            .unwrap()
            .config;
        let plan = Plan::from_config(&config);
        assert_eq!(plan.steps[0].model_version, None);
        assert_eq!(plan.steps[1].model_version, Some(3));
        assert_eq!(plan.steps[0].inputs[0], ("A".to_string(), "t1".to_string()));
        assert!(plan.optional_inputs.is_empty());
    }
}
