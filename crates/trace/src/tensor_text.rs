//! A tensor as a `TENSORS` trace writes it: its elements as C++'s
//! `std::ostream` prints them, comma-separated.

use std::fmt::Write;

use oxiserve_types::{DataType, Tensor};

/// A traced tensor's name, data, shape and datatype, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TensorText {
    pub name: String,
    pub data: String,
    pub shape: String,
    pub dtype: &'static str,
}

impl TensorText {
    pub fn new(tensor: &Tensor) -> Self {
        let shape = tensor
            .shape
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        Self {
            name: tensor.name.clone(),
            data: elements(tensor.datatype, &tensor.data),
            shape,
            dtype: tensor.datatype.wire_name(),
        }
    }
}

/// The elements of `data`: integers in decimal, booleans as 0 and 1, 8-bit
/// integers as characters and floats as `%g` (as `std::ostream` prints
/// them), strings in double quotes; nothing for FP16 and BF16 (Triton
/// writes none).
fn elements(datatype: DataType, data: &[u8]) -> String {
    fn each<const N: usize>(data: &[u8], mut f: impl FnMut([u8; N]) -> String) -> Vec<String> {
        data.chunks_exact(N)
            .map(|c| f(c.try_into().expect("chunk of N bytes")))
            .collect()
    }
    let items: Vec<String> = match datatype {
        DataType::Bool => data
            .iter()
            .map(|&b| if b == 0 { "0" } else { "1" }.to_string())
            .collect(),
        DataType::Uint8 => data.iter().map(|&b| char::from(b).to_string()).collect(),
        DataType::Int8 => data.iter().map(|&b| char::from(b).to_string()).collect(),
        DataType::Uint16 => each(data, |b| u16::from_le_bytes(b).to_string()),
        DataType::Uint32 => each(data, |b| u32::from_le_bytes(b).to_string()),
        DataType::Uint64 => each(data, |b| u64::from_le_bytes(b).to_string()),
        DataType::Int16 => each(data, |b| i16::from_le_bytes(b).to_string()),
        DataType::Int32 => each(data, |b| i32::from_le_bytes(b).to_string()),
        DataType::Int64 => each(data, |b| i64::from_le_bytes(b).to_string()),
        DataType::Fp32 => each(data, |b| format_g(f64::from(f32::from_le_bytes(b)))),
        DataType::Fp64 => each(data, |b| format_g(f64::from_le_bytes(b))),
        DataType::Fp16 | DataType::Bf16 => Vec::new(),
        DataType::Bytes => strings(data),
    };
    items.join(",")
}

/// Length-prefixed strings, each in double quotes; stops at a truncated one.
fn strings(mut data: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    while let Some((length, rest)) = data.split_first_chunk::<4>() {
        let length = u32::from_le_bytes(*length) as usize;
        if rest.len() < length {
            break;
        }
        let (text, rest) = rest.split_at(length);
        out.push(format!("\"{}\"", String::from_utf8_lossy(text)));
        data = rest;
    }
    out
}

/// `value` as printf's `%g` (six significant digits) prints it, which is
/// how `std::ostream` prints floats by default.
pub(crate) fn format_g(value: f64) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .into();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.into();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let scientific = format!("{value:.5e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes an integer exponent");
    if (-4..6).contains(&exponent) {
        let decimals = (5 - exponent) as usize;
        return trim_fraction(&format!("{value:.decimals$}")).to_string();
    }
    let mut out = trim_fraction(mantissa).to_string();
    let sign = if exponent < 0 { '-' } else { '+' };
    let _ = write!(out, "e{sign}{:02}", exponent.abs());
    out
}

/// Without trailing zeros after the decimal point (nor the point itself).
fn trim_fraction(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    #[test]
    fn floats_print_as_percent_g() {
        let cases = [
            (0.1, "0.1"),
            (1.0, "1"),
            (-2.25, "-2.25"),
            (1.0 / 3.0, "0.333333"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (999999.5, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (f64::from(f32::MAX), "3.40282e+38"),
            (f64::from(f32::MIN_POSITIVE), "1.17549e-38"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
        ];
        for (value, text) in cases {
            assert_eq!(format_g(value), text, "{value}");
        }
    }

    fn tensor(datatype: DataType, shape: Vec<i64>, data: Vec<u8>) -> Tensor {
        Tensor::new("T", datatype, shape, Bytes::from(data))
    }

    #[test]
    fn tensors_print_as_triton_writes_them() {
        let ints = [1i32, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let text = TensorText::new(&tensor(DataType::Int32, vec![1, 3], ints));
        assert_eq!(text.data, "1,-2,3");
        assert_eq!(text.shape, "1,3");
        assert_eq!(text.dtype, "INT32");
        let bools = TensorText::new(&tensor(DataType::Bool, vec![3], vec![0, 1, 7]));
        assert_eq!(bools.data, "0,1,1");
        let chars = TensorText::new(&tensor(DataType::Uint8, vec![2], vec![65, 66]));
        assert_eq!(chars.data, "A,B");
        let half = TensorText::new(&tensor(DataType::Fp16, vec![1], vec![0, 60]));
        assert_eq!(half.data, "");
        let mut bytes = Vec::new();
        for s in ["ab", ""] {
            bytes.extend((s.len() as u32).to_le_bytes());
            bytes.extend(s.as_bytes());
        }
        let strings = TensorText::new(&tensor(DataType::Bytes, vec![2], bytes));
        assert_eq!(strings.data, "\"ab\",\"\"");
    }
}
