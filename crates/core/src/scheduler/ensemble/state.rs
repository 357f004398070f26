//! Which ensemble steps can run: a plain state over the step graph, with no
//! threads and no models, so that the execution order is unit-tested.
//!
//! As in Triton, a tensor may be absent: an optional ensemble input the
//! request left out, or a step output its step did not produce. A step whose
//! inputs all exist, present or absent, runs without its absent ones (their
//! model inputs must be optional, else its model refuses the request), and
//! an absent requested output is left out of the response.

use std::collections::HashMap;

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

/// A step whose inputs all exist: its index and its model's present inputs,
/// named as the model names them (the data is shared, not copied).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadyStep {
    pub index: usize,
    pub inputs: Vec<Tensor>,
}

/// One request's progress through the graph: the tensors produced so far
/// (`None`: absent) and which steps were started and finished.
#[derive(Debug)]
pub(crate) struct State {
    tensors: HashMap<String, Option<Tensor>>,
    started: Vec<bool>,
    running: usize,
}

impl State {
    /// A request with the ensemble inputs `inputs`; the optional inputs it
    /// leaves out are absent.
    pub fn new(plan: &Plan, inputs: Vec<Tensor>) -> Self {
        let mut tensors: HashMap<_, _> = inputs
            .into_iter()
            .map(|t| (t.name.clone(), Some(t)))
            .collect();
        for name in &plan.optional_inputs {
            tensors.entry(name.clone()).or_insert(None);
        }
        Self {
            tensors,
            started: vec![false; plan.steps.len()],
            running: 0,
        }
    }

    /// Marks started and returns every step not yet started whose inputs all exist.
    pub fn take_ready(&mut self, plan: &Plan) -> Vec<ReadyStep> {
        let mut ready = Vec::new();
        for (index, step) in plan.steps.iter().enumerate() {
            if self.started[index] {
                continue;
            }
            let ready_inputs = step
                .inputs
                .iter()
                .all(|(_, t)| self.tensors.contains_key(t));
            if !ready_inputs {
                continue;
            }
            let inputs = step
                .inputs
                .iter()
                .filter_map(|(model_input, tensor)| {
                    let present = self.tensors.get(tensor)?.as_ref()?;
                    Some(Tensor {
                        name: model_input.clone(),
                        ..present.clone()
                    })
                })
                .collect();
            self.started[index] = true;
            self.running += 1;
            ready.push(ReadyStep { index, inputs });
        }
        ready
    }

    /// Step `index` finished with these outputs (named as its model names
    /// them); those in its output map become ensemble tensors, and those of
    /// its output map it did not produce become absent ones.
    pub fn complete(&mut self, plan: &Plan, index: usize, outputs: Vec<Tensor>) {
        self.running = self.running.saturating_sub(1);
        let step = &plan.steps[index];
        for output in outputs {
            if let Some((_, tensor)) = step.outputs.iter().find(|(o, _)| *o == output.name) {
                let renamed = Tensor {
                    name: tensor.clone(),
                    ..output
                };
                self.tensors.insert(tensor.clone(), Some(renamed));
            }
        }
        for (_, tensor) in &step.outputs {
            self.tensors.entry(tensor.clone()).or_insert(None);
        }
    }

    /// Whether nothing runs any more; call after [`State::take_ready`].
    pub fn is_idle(&self) -> bool {
        self.running == 0
    }

    /// The ensemble tensor `name`: `Some(None)` when it is absent, `None`
    /// while nothing produced it.
    pub fn tensor(&self, name: &str) -> Option<Option<&Tensor>> {
        self.tensors.get(name).map(Option::as_ref)
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
        state.complete(&plan, 1, vec![tensor("OUT", b"pp")]);
        let second = state.take_ready(&plan);
        assert_eq!(
            indices(&second),
            vec![0, 2],
            "independent steps start together"
        );
        assert!(second.iter().all(|r| r.inputs[0].name == "X"));
        state.complete(&plan, 2, vec![tensor("Y", b"r")]);
        assert!(!state.is_idle());
        state.complete(&plan, 0, vec![tensor("Y", b"l")]);
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
        state.complete(&plan, 1, vec![produced]);
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
        state.complete(&plan, 0, vec![tensor("Y", b"2"), tensor("EXTRA", b"3")]);
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
        state.complete(&plan, 0, vec![tensor("OUTPUT0", b"3")]);
        let second = state.take_ready(&plan);
        assert_eq!(
            indices(&second),
            vec![1],
            "the output not produced is absent"
        );
        assert_eq!(names(&second[0]), ["INPUT0"]);
        state.complete(&plan, 1, vec![tensor("OUTPUT0", b"3")]);
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
        state.complete(
            &plan,
            0,
            vec![tensor("OUTPUT1", b"4"), tensor("OUTPUT0", b"3")],
        );
        let second = state.take_ready(&plan);
        assert_eq!(names(&second[0]), ["INPUT0", "INPUT1"]);
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
