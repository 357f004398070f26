//! Stub -> server: frames (after their length prefix) to [`FromStub`] messages.

use std::time::Duration;

use oxiserve_backend::DirectExecution;
use oxiserve_types::{Error, Result};

use super::{
    Correlation, FromStub, FromStubKind, LogLevel, MAX_NDIM, MetricCall, MetricOp,
    ModelControlCall, NO_ERROR, Payload, SEND_FAILED, SEND_FINAL, TensorDesc, WireRequest,
    WireResponse, dtype_from_code, error_kind, metric::kind_from_code, protocol_error,
};
use crate::arena::ALIGN;

/// Decodes a frame from the stub: the `len` bytes after the length prefix
/// (`kind`, `tag`, body). Errors say what is malformed.
pub fn decode(frame: &[u8]) -> Result<FromStub> {
    let mut r = Reader::new(frame);
    let code = r
        .u32()
        .map_err(|e| protocol_error(format!("frame header: {}", e.message)))?;
    let kind = FromStubKind::from_code(code)
        .ok_or_else(|| protocol_error(format!("unknown frame kind {code}")))?;
    decode_body(kind, &mut r)
        .and_then(|msg| r.finish().map(|()| msg))
        .map_err(|e| protocol_error(format!("{kind:?} frame: {}", e.message)))
}

fn decode_body(kind: FromStubKind, r: &mut Reader<'_>) -> Result<FromStub> {
    let tag = r.u64()?;
    Ok(match kind {
        FromStubKind::InitDone => FromStub::InitDone { error: r.error()? },
        FromStubKind::ExecuteDone => {
            let batch_error = r.error()?;
            let n = r.u32()? as usize;
            let block = r.u64()?;
            let responses = r.list(n, Reader::response)?;
            FromStub::ExecuteDone {
                batch_id: tag,
                batch_error,
                block,
                responses,
            }
        }
        FromStubKind::Send => {
            let flags = r.u32()?;
            let response = if r.bool()? { Some(r.payload()?) } else { None };
            FromStub::Send {
                rid: tag,
                is_final: flags & SEND_FINAL != 0,
                failed: flags & SEND_FAILED != 0,
                response,
            }
        }
        FromStubKind::Bls => FromStub::Bls {
            bls_id: tag,
            decoupled: r.bool()?,
            model_name: r.str()?,
            model_version: r.i64()?,
            block: r.u64()?,
            request: r.request()?,
            parent_rid: r.u64()?,
        },
        FromStubKind::BlsCancel => FromStub::BlsCancel { bls_id: tag },
        FromStubKind::IsCancelled => FromStub::IsCancelled {
            call_id: tag,
            rid: r.u64()?,
        },
        FromStubKind::Log => {
            let code = r.u8()?;
            let level = LogLevel::from_code(code)
                .ok_or_else(|| Error::internal(format!("unknown log level {code}")))?;
            FromStub::Log {
                level,
                file: r.str()?,
                line: r.u32()?,
                message: r.str()?,
            }
        }
        FromStubKind::Release => FromStub::Release {
            offsets: r.offsets()?,
        },
        FromStubKind::FinalizeDone => FromStub::FinalizeDone { error: r.error()? },
        FromStubKind::Reschedule => FromStub::Reschedule { rids: r.offsets()? },
        FromStubKind::AutoCompleteDone => FromStub::AutoCompleteDone {
            error: r.error()?,
            config_json: r.str()?,
        },
        FromStubKind::MetricFamilyNew => FromStub::Metric(MetricCall::FamilyNew {
            call_id: tag,
            name: r.str()?,
            description: r.str()?,
            kind: kind_from_code(r.u8()?)?,
        }),
        FromStubKind::MetricNew => {
            let family = r.str()?;
            let labels_json = r.str()?;
            let buckets = if r.bool()? {
                let n = r.u32()? as usize;
                Some(r.list(n, Reader::f64)?)
            } else {
                None
            };
            FromStub::Metric(MetricCall::New {
                metric_id: tag,
                family,
                labels_json,
                buckets,
            })
        }
        FromStubKind::MetricUpdate => FromStub::Metric(MetricCall::Update {
            metric_id: tag,
            op: MetricOp::from_code(r.u8()?)?,
            value: r.f64()?,
        }),
        FromStubKind::MetricValue => FromStub::Metric(MetricCall::Value {
            call_id: tag,
            metric_id: r.u64()?,
        }),
        FromStubKind::MetricDelete => FromStub::Metric(MetricCall::Delete { metric_id: tag }),
        FromStubKind::LoadModel => {
            let model_name = r.str()?;
            let config = r.str()?;
            let n = r.u32()? as usize;
            let files = r.list(n, |r| Ok((r.str()?, r.blob()?)))?;
            FromStub::ModelControl {
                call_id: tag,
                call: ModelControlCall::Load {
                    model_name,
                    config,
                    files,
                },
            }
        }
        FromStubKind::UnloadModel => FromStub::ModelControl {
            call_id: tag,
            call: ModelControlCall::Unload {
                model_name: r.str()?,
                unload_dependents: r.bool()?,
            },
        },
        FromStubKind::ModelReady => FromStub::ModelControl {
            call_id: tag,
            call: ModelControlCall::IsReady {
                model_name: r.str()?,
                model_version: r.str()?,
            },
        },
        FromStubKind::LaneExecuted => {
            let n = r.u32()? as usize;
            let executions = r.list(n, |r| {
                Ok(DirectExecution {
                    compute: Duration::from_nanos(r.u64()?),
                    failed: r.bool()?,
                })
            })?;
            FromStub::LaneExecuted { executions }
        }
    })
}

/// Reads primitives off a frame, failing (never panicking) at its end.
/// Errors carry a bare message; [`decode`] adds the frame kind.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::internal(format!(
                "truncated: {n} bytes needed at byte {} of a {}-byte frame",
                self.pos + 4,
                self.buf.len()
            )));
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub(super) fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(Error::internal(format!("{n} unexpected bytes at the end"))),
        }
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub(super) fn u16(&mut self) -> Result<u16> {
        self.array().map(u16::from_le_bytes)
    }
    pub(super) fn u32(&mut self) -> Result<u32> {
        self.array().map(u32::from_le_bytes)
    }
    pub(super) fn u64(&mut self) -> Result<u64> {
        self.array().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Result<i64> {
        self.array().map(i64::from_le_bytes)
    }
    pub(super) fn f64(&mut self) -> Result<f64> {
        self.array().map(f64::from_le_bytes)
    }

    pub(super) fn bool(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(Error::internal(format!(
                "bool byte {v} at byte {} is neither 0 nor 1",
                self.pos + 3
            ))),
        }
    }

    pub(super) fn str(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|e| Error::internal(format!("string is not UTF-8: {e}")))
    }

    pub(super) fn blob(&mut self) -> Result<bytes::Bytes> {
        let n = self.u32()? as usize;
        Ok(bytes::Bytes::copy_from_slice(self.take(n)?))
    }

    /// `n` items; the capacity reserved up front is bounded by the bytes left,
    /// so a bogus count cannot allocate much.
    pub(super) fn list<T>(
        &mut self,
        n: usize,
        mut item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut items = Vec::with_capacity(n.min(self.remaining()));
        for _ in 0..n {
            items.push(item(self)?);
        }
        Ok(items)
    }

    pub(super) fn offsets(&mut self) -> Result<Vec<u64>> {
        let n = self.u32()? as usize;
        self.list(n, Self::u64)
    }

    fn tensor(&mut self) -> Result<TensorDesc> {
        let name = self.str()?;
        let fail = |what: String| Error::internal(format!("tensor '{name}': {what}"));
        let code = self.u8()?;
        let datatype =
            dtype_from_code(code).ok_or_else(|| fail(format!("unknown dtype {code}")))?;
        let ndim = self.u8()? as usize;
        if ndim > MAX_NDIM {
            return Err(fail(format!("{ndim} dims, at most {MAX_NDIM} allowed")));
        }
        let dims = self.list(ndim, Self::i64)?;
        let offset = self.u64()?;
        let nbytes = self.u64()?;
        if dims.iter().any(|&d| d < 0) {
            return Err(fail(format!("negative dimension in {dims:?}")));
        }
        if offset % ALIGN != 0 {
            return Err(fail(format!("offset {offset} is not {ALIGN}-byte aligned")));
        }
        if let Some(size) = datatype.element_size() {
            let expected = dims
                .iter()
                .try_fold(size as u64, |acc, &d| acc.checked_mul(d as u64));
            if expected != Some(nbytes) {
                return Err(fail(format!(
                    "{datatype} {dims:?} does not take {nbytes} bytes"
                )));
            }
        }
        Ok(TensorDesc {
            name,
            datatype,
            dims,
            offset,
            nbytes,
        })
    }

    fn tensors(&mut self) -> Result<Vec<TensorDesc>> {
        let n = self.u16()? as usize;
        self.list(n, Self::tensor)
    }

    pub(super) fn error(&mut self) -> Result<Option<Error>> {
        let code = self.u32()?;
        let message = self.str()?;
        Ok((code != NO_ERROR).then(|| Error::new(error_kind(code), message)))
    }

    /// `u64 block` then a `response` whose tensors are in that block.
    pub(super) fn payload(&mut self) -> Result<Payload> {
        Ok(Payload {
            block: self.u64()?,
            response: self.response()?,
        })
    }

    pub(super) fn response(&mut self) -> Result<WireResponse> {
        Ok(WireResponse {
            error: self.error()?,
            parameters_json: self.str()?,
            outputs: self.tensors()?,
        })
    }

    pub(super) fn request(&mut self) -> Result<WireRequest> {
        let flags = self.u32()?;
        let corr_kind = self.u8()?;
        let corr_u64 = self.u64()?;
        let corr_str = self.str()?;
        let correlation = match corr_kind {
            0 => Correlation::None,
            1 => Correlation::U64(corr_u64),
            2 => Correlation::Str(corr_str),
            k => {
                return Err(Error::internal(format!("unknown correlation id kind {k}")));
            }
        };
        let request_id = self.str()?;
        let parameters_json = self.str()?;
        let timeout_us = self.u64()?;
        let inputs = self.tensors()?;
        let n_out = self.u16()? as usize;
        let outputs = self.list(n_out, Self::str)?;
        Ok(WireRequest {
            flags,
            correlation,
            request_id,
            parameters_json,
            timeout_us,
            inputs,
            outputs,
        })
    }
}
