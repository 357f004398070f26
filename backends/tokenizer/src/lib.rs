//! The `tokenizer` backend: a Hugging Face `tokenizer.json` (the version
//! folder's, or `default_model_filename`) turns each text of a BYTES input
//! into a row of token ids, so that a model repository can tokenize for an
//! encoder without Python (`ensemble`: tokenizer -> ONNX model).
//!
//! Configuration: one `TYPE_STRING` input (one text per element); outputs
//! named `input_ids`, `attention_mask` and/or `token_type_ids`, `TYPE_INT64`
//! or `TYPE_INT32`, shape `[texts, tokens]`. Parameters (override what
//! tokenizer.json says): `max_length` (truncation, default the file's, else
//! 512), `padding` (`longest`: to the longest text of the request, the
//! default; `max_length`: always `max_length` tokens, so that requests of
//! any text batch together), `add_special_tokens` (default true).

mod encode;
mod plan;

use std::{path::Path, sync::Arc};

use oxiserve_backend::{
    Backend, BackendRequest, ComputeTiming, InstanceContext, Model, ModelContext, ModelInstance,
};
use oxiserve_types::{Error, ErrorKind, Result};
use tokenizers::Tokenizer;

use crate::plan::Plan;

/// The backend called `tokenizer`.
#[derive(Debug, Default)]
pub struct TokenizerBackend;

impl Backend for TokenizerBackend {
    fn name(&self) -> &str {
        "tokenizer"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        Ok(Arc::new(TokenizerModel::load(model)?))
    }

    fn check(&self, model: &ModelContext) -> Result<()> {
        TokenizerModel::load(model).map(drop)
    }
}

/// A loaded tokenizer, shared by the model's instances.
struct TokenizerModel {
    tokenizer: Arc<Tokenizer>,
    plan: Arc<Plan>,
}

impl TokenizerModel {
    fn load(model: &ModelContext) -> Result<Self> {
        let config = &model.config;
        let file = if config.default_model_filename.is_empty() {
            "tokenizer.json"
        } else {
            &config.default_model_filename
        };
        let path = model.version_path.join(file);
        let mut tokenizer = read(&path, &model.name)?;
        let plan = Plan::new(config, &tokenizer)?;
        plan.configure(&mut tokenizer)?;
        Ok(Self {
            tokenizer: Arc::new(tokenizer),
            plan: Arc::new(plan),
        })
    }
}

fn read(path: &Path, model: &str) -> Result<Tokenizer> {
    if !path.is_file() {
        return Err(Error::unavailable(format!(
            "unable to find '{}' for model '{model}': the tokenizer backend reads a Hugging Face \
             tokenizer.json (or the file default_model_filename names)",
            path.display()
        )));
    }
    Tokenizer::from_file(path).map_err(|e| {
        Error::new(
            ErrorKind::InvalidArg,
            format!(
                "model '{model}': {} is not a tokenizer.json that the tokenizers library reads: {e}",
                path.display()
            ),
        )
    })
}

impl Model for TokenizerModel {
    fn create_instance(&self, _instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        Ok(Box::new(TokenizerInstance {
            tokenizer: self.tokenizer.clone(),
            plan: self.plan.clone(),
        }))
    }
}

struct TokenizerInstance {
    tokenizer: Arc<Tokenizer>,
    plan: Arc<Plan>,
}

impl ModelInstance for TokenizerInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        timing.start_compute();
        let answers: Vec<_> = requests
            .iter()
            .map(|request| encode::request(&self.tokenizer, &self.plan, request))
            .collect();
        timing.end_compute();
        for (request, answer) in requests.into_iter().zip(answers) {
            request.sink.respond(answer);
        }
    }
}

#[cfg(test)]
mod tests;
