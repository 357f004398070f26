//! Typed tensor contents (`InferTensorContents`) to the raw little-endian
//! layout the core uses, as Triton reads them: one field per datatype,
//! narrow integers carried widened, BYTES length-prefixed.

use bytes::{BufMut, Bytes, BytesMut};
use oxiserve_proto::inference::InferTensorContents;
use oxiserve_types::{DataType, Error, Result, encode_bytes_elements};

/// Where a typed input's data comes from, for error messages.
pub(crate) struct Target<'a> {
    pub model: &'a str,
    pub input: &'a str,
    pub datatype: DataType,
}

/// The raw bytes of `contents` for an input of `target.datatype`. A field of
/// another type is refused, and so is more than one non-empty field.
pub(crate) fn to_raw(target: &Target<'_>, contents: &InferTensorContents) -> Result<Bytes> {
    let c = contents;
    let mut data: Option<Bytes> = None;
    let mut take = |field: DataType, values: Option<Bytes>| -> Result<()> {
        let Some(values) = values else {
            return Ok(());
        };
        if data.is_some() {
            return Err(Error::invalid_arg(format!(
                "unexpected explicit tensor data for input tensor '{}' for model '{}', binary \
                 data was already supplied.",
                target.input, target.model
            )));
        }
        if field != target.datatype {
            return Err(Error::invalid_arg(format!(
                "unexpected explicit tensor data for input tensor '{}' for model '{}' of type \
                 '{field}', expected datatype '{}'",
                target.input, target.model, target.datatype
            )));
        }
        data = Some(values);
        Ok(())
    };
    let dt = target.datatype;
    take(
        DataType::Bool,
        pack(&c.bool_contents, |b, v| b.put_u8(u8::from(*v))),
    )?;
    let int_type = match dt {
        DataType::Int8 | DataType::Int16 => dt,
        _ => DataType::Int32,
    };
    take(
        int_type,
        pack(&c.int_contents, |b, v| put_int(b, int_type, *v)),
    )?;
    take(
        DataType::Int64,
        pack(&c.int64_contents, |b, v| b.put_i64_le(*v)),
    )?;
    let uint_type = match dt {
        DataType::Uint8 | DataType::Uint16 => dt,
        _ => DataType::Uint32,
    };
    take(
        uint_type,
        pack(&c.uint_contents, |b, v| put_uint(b, uint_type, *v)),
    )?;
    take(
        DataType::Uint64,
        pack(&c.uint64_contents, |b, v| b.put_u64_le(*v)),
    )?;
    take(
        DataType::Fp32,
        pack(&c.fp32_contents, |b, v| b.put_f32_le(*v)),
    )?;
    take(
        DataType::Fp64,
        pack(&c.fp64_contents, |b, v| b.put_f64_le(*v)),
    )?;
    let strings = (!c.bytes_contents.is_empty()).then(|| encode_bytes_elements(&c.bytes_contents));
    take(DataType::Bytes, strings)?;
    Ok(data.unwrap_or_default())
}

/// The elements of a non-empty field, packed; `None` for an empty field.
fn pack<T>(values: &[T], put: impl Fn(&mut BytesMut, &T)) -> Option<Bytes> {
    if values.is_empty() {
        return None;
    }
    let mut out = BytesMut::with_capacity(values.len() * 8);
    for v in values {
        put(&mut out, v);
    }
    Some(out.freeze())
}

/// The low bytes of a widened signed integer.
fn put_int(out: &mut BytesMut, datatype: DataType, v: i32) {
    match datatype {
        DataType::Int8 => out.put_i8(v as i8),
        DataType::Int16 => out.put_i16_le(v as i16),
        _ => out.put_i32_le(v),
    }
}

/// The low bytes of a widened unsigned integer.
fn put_uint(out: &mut BytesMut, datatype: DataType, v: u32) {
    match datatype {
        DataType::Uint8 => out.put_u8(v as u8),
        DataType::Uint16 => out.put_u16_le(v as u16),
        _ => out.put_u32_le(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(datatype: DataType) -> Target<'static> {
        Target {
            model: "m",
            input: "IN",
            datatype,
        }
    }

    #[test]
    fn narrow_integers_are_truncated() {
        let contents = InferTensorContents {
            int_contents: vec![-1, 2],
            ..Default::default()
        };
        let raw = to_raw(&target(DataType::Int16), &contents).unwrap();
        assert_eq!(&raw[..], &[0xff, 0xff, 2, 0]);
        let contents = InferTensorContents {
            uint_contents: vec![255, 7],
            ..Default::default()
        };
        let raw = to_raw(&target(DataType::Uint8), &contents).unwrap();
        assert_eq!(&raw[..], &[255, 7]);
    }

    #[test]
    fn bytes_are_length_prefixed() {
        let contents = InferTensorContents {
            bytes_contents: vec![b"ab".to_vec(), vec![]],
            ..Default::default()
        };
        let raw = to_raw(&target(DataType::Bytes), &contents).unwrap();
        assert_eq!(&raw[..], &[2, 0, 0, 0, b'a', b'b', 0, 0, 0, 0]);
    }

    #[test]
    fn wrong_or_duplicate_fields_are_refused() {
        let contents = InferTensorContents {
            fp32_contents: vec![1.0],
            ..Default::default()
        };
        let err = to_raw(&target(DataType::Fp16), &contents).unwrap_err();
        assert!(
            err.message
                .contains("of type 'FP32', expected datatype 'FP16'"),
            "{err}"
        );
        let contents = InferTensorContents {
            int64_contents: vec![1],
            fp32_contents: vec![1.0],
            ..Default::default()
        };
        let err = to_raw(&target(DataType::Int64), &contents).unwrap_err();
        assert!(err.message.contains("already supplied"), "{err}");
    }
}
