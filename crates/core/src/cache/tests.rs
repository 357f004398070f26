use std::sync::Arc;

use bytes::Bytes;
use oxiserve_backend::BackendResponse;
use oxiserve_types::{DataType, InferRequest, Tensor};

use super::{LocalCache, ResponseCache, cache_key, entry};
use crate::cache_store::{CacheStore, Inserted};

fn tensor(name: &str, shape: Vec<i64>, data: &'static [u8]) -> Tensor {
    Tensor::new(name, DataType::Uint8, shape, Bytes::from_static(data))
}

fn request(inputs: Vec<Tensor>) -> InferRequest {
    InferRequest {
        inputs,
        ..Default::default()
    }
}

#[test]
fn entries_round_trip() {
    let response = BackendResponse::new(vec![
        tensor("A", vec![2, 2], b"abcd"),
        tensor("B", vec![], b""),
    ]);
    assert_eq!(entry::decode(&entry::encode(&response)), Ok(response));
    assert!(entry::decode(&entry::encode(&BackendResponse::default())[..4]).is_err());
}

#[test]
fn keys_cover_what_changes_the_answer() {
    let a = request(vec![
        tensor("X", vec![4], b"abcd"),
        tensor("Y", vec![1], b"z"),
    ]);
    let swapped = request(vec![
        tensor("Y", vec![1], b"z"),
        tensor("X", vec![4], b"abcd"),
    ]);
    let key = |m: &str, v: i64, r: &InferRequest, o: &[&str]| {
        cache_key(
            m,
            v,
            r,
            &o.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    };
    let base = key("m", 1, &a, &["O"]);
    assert_eq!(base, key("m", 1, &swapped, &["O"]));
    assert_ne!(base, key("n", 1, &a, &["O"]));
    assert_ne!(base, key("m", 2, &a, &["O"]));
    assert_ne!(base, key("m", 1, &a, &["P"]));
    let reshaped = request(vec![
        tensor("X", vec![2, 2], b"abcd"),
        tensor("Y", vec![1], b"z"),
    ]);
    assert_ne!(base, key("m", 1, &reshaped, &["O"]));
    let other = request(vec![
        tensor("X", vec![4], b"abce"),
        tensor("Y", vec![1], b"z"),
    ]);
    assert_ne!(base, key("m", 1, &other, &["O"]));
}

#[test]
fn local_cache_evicts_least_recently_used() {
    let cache = LocalCache::new(25);
    assert_eq!(cache.insert("a", vec![0; 9]), Inserted::Stored);
    assert_eq!(cache.insert("b", vec![1; 9]), Inserted::Stored);
    assert_eq!(cache.insert("a", vec![2; 9]), Inserted::AlreadyExists);
    assert_eq!(cache.lookup("a"), Some(vec![0; 9]));
    assert_eq!(cache.insert("c", vec![3; 9]), Inserted::Stored);
    assert_eq!(cache.lookup("b"), None, "b was the least recently used");
    assert!(cache.lookup("a").is_some() && cache.lookup("c").is_some());
    assert!(matches!(
        cache.insert("d", vec![0; 40]),
        Inserted::Failed(_)
    ));
}

#[test]
fn misses_count_unless_the_key_exists() {
    let cache = ResponseCache::new(Arc::new(LocalCache::new(1024)));
    let response = BackendResponse::new(vec![tensor("A", vec![1], b"a")]);
    assert!(cache.lookup("k").0.is_none());
    assert!(cache.insert("k", &response).0);
    assert!(!cache.insert("k", &response).0);
    assert_eq!(cache.lookup("k").0, Some(response));
}
