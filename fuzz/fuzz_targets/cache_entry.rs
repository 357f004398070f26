//! A response cache entry as a store hands it back (Redis holds outside
//! bytes: another server, an old version, or anyone with access may have
//! written them): decoding never panics, and what decodes encodes back to
//! the same entry.
//!
//! Input: the entry's bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oxiserve_core::fuzzing::{decode_cache_entry, encode_cache_entry};

fuzz_target!(|data: &[u8]| {
    if let Ok(response) = decode_cache_entry(data) {
        let again = decode_cache_entry(&encode_cache_entry(&response));
        assert_eq!(
            again.as_ref(),
            Ok(&response),
            "an entry survives a round trip"
        );
    }
});
