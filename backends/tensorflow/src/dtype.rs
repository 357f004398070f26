//! Triton datatypes and TensorFlow's `TF_DataType`, both ways.

use oxiserve_types::DataType;

use crate::capi::TF_DataType;

/// Each Triton datatype, its TensorFlow value and `DT_` name. BYTES is
/// TensorFlow's string; BF16 goes beyond Triton's TensorFlow backend.
const TABLE: [(DataType, TF_DataType, &str); 14] = [
    (DataType::Fp32, 1, "DT_FLOAT"),
    (DataType::Fp64, 2, "DT_DOUBLE"),
    (DataType::Int32, 3, "DT_INT32"),
    (DataType::Uint8, 4, "DT_UINT8"),
    (DataType::Int16, 5, "DT_INT16"),
    (DataType::Int8, 6, "DT_INT8"),
    (DataType::Bytes, 7, "DT_STRING"),
    (DataType::Int64, 9, "DT_INT64"),
    (DataType::Bool, 10, "DT_BOOL"),
    (DataType::Bf16, 14, "DT_BFLOAT16"),
    (DataType::Uint16, 17, "DT_UINT16"),
    (DataType::Fp16, 19, "DT_HALF"),
    (DataType::Uint32, 22, "DT_UINT32"),
    (DataType::Uint64, 23, "DT_UINT64"),
];

/// TensorFlow's string type.
pub(crate) const TF_STRING: TF_DataType = 7;

/// The TensorFlow type of a Triton datatype.
pub(crate) fn to_tf(dtype: DataType) -> TF_DataType {
    TABLE
        .iter()
        .find(|(d, ..)| *d == dtype)
        .map_or(0, |&(_, tf, _)| tf)
}

/// The Triton datatype of a TensorFlow type; `None` for types Triton has no
/// datatype for (complex numbers, quantized types, resources, variants).
pub(crate) fn from_tf(tf: TF_DataType) -> Option<DataType> {
    TABLE.iter().find(|(_, t, _)| *t == tf).map(|&(d, ..)| d)
}

/// TensorFlow's own name of a type (`DT_FLOAT`), for types Triton refuses.
pub(crate) fn tf_name(tf: TF_DataType) -> String {
    TABLE
        .iter()
        .find(|(_, t, _)| *t == tf)
        .map_or_else(|| format!("DataType({tf})"), |(.., name)| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_datatype_round_trips() {
        for &dtype in DataType::all() {
            assert_eq!(from_tf(to_tf(dtype)), Some(dtype), "{dtype:?}");
        }
        assert_eq!(from_tf(8), None, "DT_COMPLEX64");
        assert_eq!(from_tf(7), Some(DataType::Bytes), "DT_STRING");
        assert_eq!(from_tf(20), None, "DT_RESOURCE");
        assert_eq!(tf_name(1), "DT_FLOAT");
        assert_eq!(tf_name(8), "DataType(8)");
    }
}
