//! A cached response as bytes: its outputs' names, datatypes, shapes and
//! data, as Triton's cache entries hold them (response parameters are not
//! kept, as in Triton).

use bytes::Bytes;
use oxiserve_backend::BackendResponse;
use oxiserve_types::{DataType, Tensor};

/// `response`'s outputs, encoded.
pub(crate) fn encode(response: &BackendResponse) -> Vec<u8> {
    let size: usize = response
        .outputs
        .iter()
        .map(|o| 32 + o.name.len() + 8 * o.shape.len() + o.data.len())
        .sum();
    let mut out = Vec::with_capacity(8 + size);
    put(&mut out, &(response.outputs.len() as u64).to_le_bytes());
    for output in &response.outputs {
        put_field(&mut out, output.name.as_bytes());
        put_field(&mut out, output.datatype.wire_name().as_bytes());
        let shape: Vec<u8> = output.shape.iter().flat_map(|d| d.to_le_bytes()).collect();
        put_field(&mut out, &shape);
        put_field(&mut out, &output.data);
    }
    out
}

/// The response `bytes` encode.
pub(crate) fn decode(bytes: &[u8]) -> Result<BackendResponse, String> {
    let mut reader = Reader(bytes);
    let count = reader.u64()?;
    let mut outputs = Vec::new();
    for _ in 0..count {
        let name = String::from_utf8(reader.field()?.to_vec()).map_err(|e| e.to_string())?;
        let datatype = std::str::from_utf8(reader.field()?)
            .ok()
            .and_then(DataType::from_wire_name)
            .ok_or("bad datatype")?;
        let shape = reader
            .field()?
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let data = Bytes::copy_from_slice(reader.field()?);
        outputs.push(Tensor::new(name, datatype, shape, data));
    }
    Ok(BackendResponse::new(outputs))
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
}

fn put_field(out: &mut Vec<u8>, bytes: &[u8]) {
    put(out, &(bytes.len() as u64).to_le_bytes());
    put(out, bytes);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("truncated entry".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, String> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(
            bytes.try_into().map_err(|_| "truncated entry")?,
        ))
    }

    fn field(&mut self) -> Result<&'a [u8], String> {
        let len = usize::try_from(self.u64()?).map_err(|e| e.to_string())?;
        self.take(len)
    }
}
