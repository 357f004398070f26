//! Properties of the BYTES wire layout (4-byte little-endian length, then the
//! bytes, per element) and of shapes, on arbitrary input.

use oxiserve_types::{bytes_elements, element_count, encode_bytes_elements};
use proptest::prelude::*;

fn elements() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn encoded_elements_decode_to_themselves(elements in elements()) {
        let data = encode_bytes_elements(&elements);
        let decoded = bytes_elements("IN", &data, elements.len()).unwrap();
        prop_assert_eq!(decoded, elements.iter().map(Vec::as_slice).collect::<Vec<_>>());
    }

    #[test]
    fn a_count_other_than_the_data_holds_is_refused(elements in elements(), count in any::<usize>()) {
        prop_assume!(count != elements.len());
        let data = encode_bytes_elements(&elements);
        prop_assert!(bytes_elements("IN", &data, count).is_err());
    }

    #[test]
    fn arbitrary_data_never_panics_and_what_passes_encodes_back(
        data in prop::collection::vec(any::<u8>(), 0..64),
        count in prop_oneof![0usize..8, any::<usize>()],
    ) {
        if let Ok(decoded) = bytes_elements("IN", &data, count) {
            prop_assert_eq!(decoded.len(), count);
            prop_assert_eq!(&encode_bytes_elements(decoded)[..], &data[..]);
        }
    }

    #[test]
    fn element_count_is_the_product_or_none(shape in prop::collection::vec(any::<i64>(), 0..5)) {
        let exact = shape.iter().try_fold(1u128, |acc, &d| {
            u128::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        });
        let expected = exact.and_then(|n| usize::try_from(n).ok());
        prop_assert_eq!(element_count(&shape), expected);
    }
}
