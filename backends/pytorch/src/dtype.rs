//! Triton datatypes and libtorch scalar types, both ways.

use oxiserve_types::DataType;
use tch::Kind;

/// The libtorch scalar type of a Triton datatype: Triton's PyTorch mapping
/// plus BF16; `None` for the unsigned types libtorch lacks and for BYTES
/// (a list of strings, not a tensor).
pub(crate) fn to_torch(dtype: DataType) -> Option<Kind> {
    Some(match dtype {
        DataType::Bool => Kind::Bool,
        DataType::Uint8 => Kind::Uint8,
        DataType::Int8 => Kind::Int8,
        DataType::Int16 => Kind::Int16,
        DataType::Int32 => Kind::Int,
        DataType::Int64 => Kind::Int64,
        DataType::Fp16 => Kind::Half,
        DataType::Bf16 => Kind::BFloat16,
        DataType::Fp32 => Kind::Float,
        DataType::Fp64 => Kind::Double,
        DataType::Uint16 | DataType::Uint32 | DataType::Uint64 | DataType::Bytes => return None,
    })
}

/// The Triton datatype of a libtorch scalar type; `None` for complex,
/// quantized and 8-bit float types.
pub(crate) fn from_torch(kind: Kind) -> Option<DataType> {
    DataType::all()
        .iter()
        .copied()
        .find(|&dtype| to_torch(dtype) == Some(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tensor_datatype_round_trips() {
        for &dtype in DataType::all() {
            match to_torch(dtype) {
                Some(kind) => assert_eq!(from_torch(kind), Some(dtype)),
                None => assert!(matches!(
                    dtype,
                    DataType::Uint16 | DataType::Uint32 | DataType::Uint64 | DataType::Bytes
                )),
            }
        }
        assert_eq!(to_torch(DataType::Bf16), Some(Kind::BFloat16));
        assert_eq!(from_torch(Kind::ComplexFloat), None);
        assert_eq!(from_torch(Kind::QInt8), None);
    }
}
