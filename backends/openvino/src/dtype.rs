//! Triton datatypes and OpenVINO element types, both ways.

use openvino::ElementType as Ov;
use oxiserve_types::DataType;

/// The OpenVINO element type of a Triton datatype; `None` for BYTES, which
/// the backend does not pass to OpenVINO (as in Triton's backend).
pub(crate) fn to_openvino(dtype: DataType) -> Option<Ov> {
    Some(match dtype {
        DataType::Bool => Ov::Boolean,
        DataType::Uint8 => Ov::U8,
        DataType::Uint16 => Ov::U16,
        DataType::Uint32 => Ov::U32,
        DataType::Uint64 => Ov::U64,
        DataType::Int8 => Ov::I8,
        DataType::Int16 => Ov::I16,
        DataType::Int32 => Ov::I32,
        DataType::Int64 => Ov::I64,
        DataType::Fp16 => Ov::F16,
        DataType::Fp32 => Ov::F32,
        DataType::Fp64 => Ov::F64,
        DataType::Bf16 => Ov::Bf16,
        DataType::Bytes => return None,
    })
}

/// The Triton datatype of an OpenVINO element type; `None` for types Triton
/// has no datatype for (4-bit, 8-bit floats, strings).
pub(crate) fn from_openvino(ov: Ov) -> Option<DataType> {
    DataType::all()
        .iter()
        .copied()
        .find(|&dtype| to_openvino(dtype) == Some(ov))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_numeric_datatype_round_trips() {
        for &dtype in DataType::all() {
            match to_openvino(dtype) {
                Some(ov) => assert_eq!(from_openvino(ov), Some(dtype)),
                None => assert_eq!(dtype, DataType::Bytes),
            }
        }
        assert_eq!(from_openvino(Ov::String), None);
        assert_eq!(from_openvino(Ov::I4), None);
        assert_eq!(from_openvino(Ov::Bf16), Some(DataType::Bf16));
    }
}
