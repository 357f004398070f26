//! Rust element types of tensors and their KServe v2 datatypes.

use oxiserve_types::DataType;

/// A Rust type that is a tensor element: its datatype and its little-endian
/// wire form. BYTES elements are strings, see [`InferInput::from_strings`]
/// and [`InferResult::as_strings`].
///
/// [`InferInput::from_strings`]: crate::InferInput::from_strings
/// [`InferResult::as_strings`]: crate::InferResult::as_strings
pub trait Element: Copy + 'static {
    /// The datatype of tensors of this element.
    const DATATYPE: DataType;
    /// The bytes of one element.
    type Bytes: AsRef<[u8]>;
    /// The element's bytes in the wire layout (little-endian).
    fn to_wire(self) -> Self::Bytes;
    /// An element from its wire bytes (exactly its size).
    fn from_wire(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty => $datatype:ident),* $(,)?) => {$(
        impl Element for $t {
            const DATATYPE: DataType = DataType::$datatype;
            type Bytes = [u8; size_of::<$t>()];
            fn to_wire(self) -> Self::Bytes {
                self.to_le_bytes()
            }
            fn from_wire(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one element's bytes"))
            }
        }
    )*};
}

element! {
    u8 => Uint8, u16 => Uint16, u32 => Uint32, u64 => Uint64,
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    half::f16 => Fp16, half::bf16 => Bf16, f32 => Fp32, f64 => Fp64,
}

impl Element for bool {
    const DATATYPE: DataType = DataType::Bool;
    type Bytes = [u8; 1];
    fn to_wire(self) -> [u8; 1] {
        [u8::from(self)]
    }
    fn from_wire(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_round_trip_little_endian() {
        assert_eq!(Element::to_wire(0x0102_u16), [2, 1]);
        assert_eq!(<i32 as Element>::from_wire(&(-5_i32).to_wire()), -5);
        assert_eq!(
            half::bf16::from_wire(&half::bf16::ONE.to_wire()),
            half::bf16::ONE
        );
        assert!(bool::from_wire(&true.to_wire()));
        assert_eq!(<f64 as Element>::DATATYPE, DataType::Fp64);
    }
}
