//! How a model batches, worked out once from its configuration: whether
//! every tensor carries a leading batch dimension, and how large a batch
//! may grow. Everything that needs `max_batch_size` asks this type.

use std::num::NonZeroU32;

use oxiserve_proto::ModelConfig;

/// A model's batching. With a limit (`max_batch_size > 0`) every tensor's
/// first dimension is the batch, left out of the configuration's `dims`,
/// and requests may be batched together up to the limit. Without one the
/// `dims` are the full shape and each execution takes one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchPlan {
    limit: Option<NonZeroU32>,
}

impl BatchPlan {
    /// The plan of `config` (a negative `max_batch_size`, which validation
    /// refuses, means no batching).
    pub fn of(config: &ModelConfig) -> Self {
        Self::with_max_batch_size(config.max_batch_size)
    }

    /// The plan of a `max_batch_size`.
    pub fn with_max_batch_size(max_batch_size: i32) -> Self {
        Self {
            limit: u32::try_from(max_batch_size).ok().and_then(NonZeroU32::new),
        }
    }

    /// The largest batch, or `None` when the model does not batch.
    pub fn limit(self) -> Option<NonZeroU32> {
        self.limit
    }

    /// Whether tensors carry a leading batch dimension.
    pub fn is_batching(self) -> bool {
        self.limit.is_some()
    }

    /// The most requests' worth one execution takes: the limit, or 1.
    pub fn max_batch(self) -> u64 {
        self.limit.map_or(1, |l| u64::from(l.get()))
    }

    /// The dimensions before a tensor's configured `dims`: `[-1]` (any
    /// batch) when batching, none otherwise.
    pub fn batch_dims(self) -> &'static [i64] {
        if self.is_batching() { &[-1] } else { &[] }
    }

    /// The full shape of a tensor whose configuration says `dims`.
    pub fn full_shape(self, dims: &[i64]) -> Vec<i64> {
        self.batch_dims().iter().chain(dims).copied().collect()
    }

    /// A request tensor's `shape` without its batch dimension: what the
    /// configuration's `dims` describe.
    pub fn item_dims(self, shape: &[i64]) -> &[i64] {
        match self.is_batching() {
            true => shape.get(1..).unwrap_or(&[]),
            false => shape,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batching_follows_max_batch_size() {
        let none = BatchPlan::with_max_batch_size(0);
        assert!(!none.is_batching());
        assert_eq!(none.max_batch(), 1);
        assert_eq!(none.full_shape(&[3, 4]), [3, 4]);
        assert_eq!(none.item_dims(&[3, 4]), [3, 4]);
        assert_eq!(BatchPlan::with_max_batch_size(-2), none);

        let eight = BatchPlan::with_max_batch_size(8);
        assert_eq!(eight.limit().map(NonZeroU32::get), Some(8));
        assert_eq!(eight.max_batch(), 8);
        assert_eq!(eight.full_shape(&[3]), [-1, 3]);
        assert_eq!(eight.item_dims(&[2, 3]), [3]);
        assert_eq!(eight.item_dims(&[]), [] as [i64; 0]);
    }
}
