//! Triton datatypes and ONNX element types, both ways.

use ort::value::TensorElementType as Onnx;
use oxiserve_types::DataType;

/// The ONNX element type a Triton datatype maps to (BYTES is an ONNX string).
pub(crate) fn to_onnx(dtype: DataType) -> Onnx {
    match dtype {
        DataType::Bool => Onnx::Bool,
        DataType::Uint8 => Onnx::Uint8,
        DataType::Uint16 => Onnx::Uint16,
        DataType::Uint32 => Onnx::Uint32,
        DataType::Uint64 => Onnx::Uint64,
        DataType::Int8 => Onnx::Int8,
        DataType::Int16 => Onnx::Int16,
        DataType::Int32 => Onnx::Int32,
        DataType::Int64 => Onnx::Int64,
        DataType::Fp16 => Onnx::Float16,
        DataType::Fp32 => Onnx::Float32,
        DataType::Fp64 => Onnx::Float64,
        DataType::Bf16 => Onnx::Bfloat16,
        DataType::Bytes => Onnx::String,
    }
}

/// The Triton datatype of an ONNX element type; `None` for types Triton has
/// no datatype for (complex numbers, 8-bit and 4-bit floats).
pub(crate) fn from_onnx(onnx: Onnx) -> Option<DataType> {
    DataType::all()
        .iter()
        .copied()
        .find(|&dtype| to_onnx(dtype) == onnx)
}

/// How Triton names an ONNX element type in messages: `TYPE_FP32`, or
/// `TYPE_INVALID` when it has none.
pub(crate) fn config_name(onnx: Onnx) -> &'static str {
    from_onnx(onnx).map_or("TYPE_INVALID", DataType::config_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_datatype_round_trips() {
        for &dtype in DataType::all() {
            assert_eq!(from_onnx(to_onnx(dtype)), Some(dtype));
        }
        assert_eq!(from_onnx(Onnx::Complex64), None);
        assert_eq!(config_name(Onnx::String), "TYPE_STRING");
        assert_eq!(config_name(Onnx::Float8E5M2), "TYPE_INVALID");
    }
}
