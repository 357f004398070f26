//! oxiserve's batch padding parameters (beyond Triton): `batch_padding`
//! (`longest`, `buckets` or `none`), `batch_pad_value` and
//! `batch_bucket_cost`. Read here once, for the dynamic batcher and for
//! validation, which reports a bad value before the model loads.

use oxiserve_proto::ModelConfig;

use crate::batch_plan::BatchPlan;

/// What one more run costs when `batch_bucket_cost` is not set, in padded
/// elements per row: a text encoder's run of a few rows costs about what 20
/// to 40 more tokens do.
const DEFAULT_BUCKET_COST: u64 = 32;

/// How the dynamic batcher pads the variable-size inputs of one batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchPadding {
    /// Written into the new places (`batch_pad_value`, default 0).
    pub value: f64,
    /// `Some(cost of one more run)` with `buckets`: the batch is sorted by
    /// length and cut into runs, each padded to its own longest. `None` pads
    /// the whole batch to its longest.
    pub bucket_cost: Option<u64>,
}

/// A bad padding parameter: which one, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaddingError {
    /// The parameter's key.
    pub parameter: &'static str,
    pub message: String,
}

impl std::fmt::Display for PaddingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "parameter '{}' {}", self.parameter, self.message)
    }
}

impl BatchPadding {
    /// The padding `config`'s parameters ask for, if any.
    pub fn of(config: &ModelConfig) -> Result<Option<Self>, PaddingError> {
        let param = |key: &str| config.parameters.get(key).map(|p| p.string_value.trim());
        let error = |parameter, message: String| Err(PaddingError { parameter, message });
        let buckets = match param("batch_padding") {
            None | Some("") | Some("none") => None,
            Some("longest") => Some(false),
            Some("buckets") => Some(true),
            Some(other) => {
                return error(
                    "batch_padding",
                    format!("must be 'longest', 'buckets' or 'none', got '{other}'"),
                );
            }
        };
        let bucket_cost = match (param("batch_bucket_cost"), buckets) {
            (None, Some(true)) => Some(DEFAULT_BUCKET_COST),
            (None, _) => None,
            (Some(text), Some(true)) => match text.parse::<u64>() {
                Ok(cost) => Some(cost),
                Err(_) => {
                    return error(
                        "batch_bucket_cost",
                        format!("must be a whole number of padded elements, got '{text}'"),
                    );
                }
            },
            (Some(text), _) => {
                return error(
                    "batch_bucket_cost",
                    format!("('{text}') needs batch_padding 'buckets'"),
                );
            }
        };
        if buckets.is_none() {
            return Ok(None);
        }
        if !BatchPlan::of(config).is_batching() {
            return error("batch_padding", "needs max_batch_size > 0".into());
        }
        let value = match param("batch_pad_value") {
            None => 0.0,
            Some(text) => match text.parse::<f64>() {
                Ok(value) => value,
                Err(_) => {
                    return error("batch_pad_value", format!("must be a number, got '{text}'"));
                }
            },
        };
        Ok(Some(Self { value, bucket_cost }))
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::ModelParameter;

    use super::*;

    fn config(max_batch_size: i32, parameters: &[(&str, &str)]) -> ModelConfig {
        ModelConfig {
            name: "enc".into(),
            max_batch_size,
            parameters: parameters
                .iter()
                .map(|(k, v)| {
                    let value = ModelParameter {
                        string_value: (*v).into(),
                    };
                    ((*k).into(), value)
                })
                .collect(),
            ..Default::default()
        }
    }

    fn padding(parameters: &[(&str, &str)]) -> Result<Option<BatchPadding>, String> {
        BatchPadding::of(&config(8, parameters)).map_err(|e| e.to_string())
    }

    #[test]
    fn longest_buckets_and_none() {
        let longest = padding(&[("batch_padding", "longest")]).unwrap().unwrap();
        assert_eq!((longest.value, longest.bucket_cost), (0.0, None));
        let buckets = padding(&[("batch_padding", "buckets")]).unwrap().unwrap();
        assert_eq!(buckets.bucket_cost, Some(DEFAULT_BUCKET_COST));
        let set = [
            ("batch_padding", "buckets"),
            ("batch_bucket_cost", "100"),
            ("batch_pad_value", "-1.5"),
        ];
        let set = padding(&set).unwrap().unwrap();
        assert_eq!((set.value, set.bucket_cost), (-1.5, Some(100)));
        assert_eq!(padding(&[]), Ok(None));
        assert_eq!(padding(&[("batch_padding", "none")]), Ok(None));
    }

    #[test]
    fn bad_parameters_say_which_and_why() {
        let cases: [(&[(&str, &str)], &str); 5] = [
            (
                &[("batch_padding", "bucket")],
                "parameter 'batch_padding' must be 'longest', 'buckets' or 'none', got 'bucket'",
            ),
            (
                &[("batch_padding", "buckets"), ("batch_bucket_cost", "-1")],
                "parameter 'batch_bucket_cost' must be a whole number of padded elements, got '-1'",
            ),
            (
                &[("batch_padding", "longest"), ("batch_bucket_cost", "8")],
                "parameter 'batch_bucket_cost' ('8') needs batch_padding 'buckets'",
            ),
            (
                &[("batch_bucket_cost", "8")],
                "parameter 'batch_bucket_cost' ('8') needs batch_padding 'buckets'",
            ),
            (
                &[("batch_padding", "longest"), ("batch_pad_value", "zero")],
                "parameter 'batch_pad_value' must be a number, got 'zero'",
            ),
        ];
        for (parameters, message) in cases {
            assert_eq!(padding(parameters).unwrap_err(), message);
        }
        let unbatched = BatchPadding::of(&config(0, &[("batch_padding", "longest")]));
        assert_eq!(
            unbatched.unwrap_err().to_string(),
            "parameter 'batch_padding' needs max_batch_size > 0"
        );
    }
}
