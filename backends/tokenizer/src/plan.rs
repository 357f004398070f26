//! What a tokenizer model's configuration asks for: its input, which token
//! tensors it returns, and how texts are truncated and padded.

use oxiserve_proto::ModelConfig;
use oxiserve_types::{DataType, Error, Result};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// The token tensors the backend can return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenTensor {
    InputIds,
    AttentionMask,
    TokenTypeIds,
}

const NAMES: [(&str, TokenTensor); 3] = [
    ("input_ids", TokenTensor::InputIds),
    ("attention_mask", TokenTensor::AttentionMask),
    ("token_type_ids", TokenTensor::TokenTypeIds),
];

/// How a model turns texts into tokens.
#[derive(Debug)]
pub(crate) struct Plan {
    pub model: String,
    pub input: String,
    /// (what, output name, INT64 or INT32).
    pub outputs: Vec<(TokenTensor, String, DataType)>,
    pub max_length: usize,
    /// Pad every row to `max_length` (else to the request's longest text).
    pub pad_to_max_length: bool,
    pub add_special_tokens: bool,
    pub pad_id: u32,
    pub pad_type_id: u32,
}

impl Plan {
    /// Reads `config` for a model of `tokenizer`.
    pub fn new(config: &ModelConfig, tokenizer: &Tokenizer) -> Result<Self> {
        let model = &config.name;
        let [input] = config.input.as_slice() else {
            return Err(Error::invalid_arg(format!(
                "tokenizer model '{model}' must have exactly one input (TYPE_STRING, one text per \
                 element), it has {}",
                config.input.len()
            )));
        };
        if DataType::from_config_number(input.data_type) != Some(DataType::Bytes) {
            return Err(Error::invalid_arg(format!(
                "tokenizer model '{model}': input '{}' must be TYPE_STRING",
                input.name
            )));
        }
        let outputs = config
            .output
            .iter()
            .map(|output| {
                let what = NAMES
                    .iter()
                    .find(|(name, _)| *name == output.name)
                    .map(|(_, what)| *what)
                    .ok_or_else(|| {
                        Error::invalid_arg(format!(
                            "tokenizer model '{model}': output '{}' is not one of input_ids, \
                             attention_mask, token_type_ids",
                            output.name
                        ))
                    })?;
                let dtype = DataType::from_config_number(output.data_type)
                    .filter(|d| matches!(d, DataType::Int64 | DataType::Int32))
                    .ok_or_else(|| {
                        Error::invalid_arg(format!(
                            "tokenizer model '{model}': output '{}' must be TYPE_INT64 or TYPE_INT32",
                            output.name
                        ))
                    })?;
                Ok((what, output.name.clone(), dtype))
            })
            .collect::<Result<Vec<_>>>()?;
        if outputs.is_empty() {
            return Err(Error::invalid_arg(format!(
                "tokenizer model '{model}' has no output: add input_ids (and attention_mask, \
                 token_type_ids as the encoder needs)"
            )));
        }
        let param = |key: &str| config.parameters.get(key).map(|p| p.string_value.trim());
        let max_length = match param("max_length") {
            Some(text) => text.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| {
                Error::invalid_arg(format!(
                    "tokenizer model '{model}': parameter 'max_length' must be a positive whole \
                     number, got '{text}'"
                ))
            })?,
            None => tokenizer.get_truncation().map_or(512, |t| t.max_length),
        };
        let pad_to_max_length = match param("padding") {
            None | Some("longest") => false,
            Some("max_length") => true,
            Some(other) => {
                return Err(Error::invalid_arg(format!(
                    "tokenizer model '{model}': parameter 'padding' must be 'longest' or \
                     'max_length', got '{other}'"
                )));
            }
        };
        let add_special_tokens = match param("add_special_tokens") {
            None | Some("true") | Some("1") => true,
            Some("false") | Some("0") => false,
            Some(other) => {
                return Err(Error::invalid_arg(format!(
                    "tokenizer model '{model}': parameter 'add_special_tokens' must be true or \
                     false, got '{other}'"
                )));
            }
        };
        let padding = tokenizer.get_padding();
        Ok(Self {
            model: model.clone(),
            input: input.name.clone(),
            outputs,
            max_length,
            pad_to_max_length,
            add_special_tokens,
            pad_id: padding.map_or(0, |p| p.pad_id),
            pad_type_id: padding.map_or(0, |p| p.pad_type_id),
        })
    }

    /// Sets the tokenizer's truncation to `max_length` and turns its own
    /// padding off: rows are padded per request by the backend.
    pub fn configure(&self, tokenizer: &mut Tokenizer) -> Result<()> {
        let truncation = TruncationParams {
            max_length: self.max_length,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        };
        tokenizer
            .with_truncation(Some(truncation))
            .map_err(|e| {
                Error::invalid_arg(format!(
                    "tokenizer model '{}': max_length {}: {e}",
                    self.model, self.max_length
                ))
            })?
            .with_padding(None);
        Ok(())
    }
}
