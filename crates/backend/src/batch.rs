//! For backends that run a batch as one framework call (ONNX Runtime,
//! PyTorch): group the requests that can share one tensor per input, run
//! each group, and hand each request its rows of the call's outputs.

use bytes::Bytes;
use oxiserve_types::{
    DataType, Error, ErrorKind, Result, Tensor, element_count, encode_bytes_elements,
};

use crate::request::BackendRequest;
use crate::sink::BackendResponse;
use crate::timing::ComputeTiming;

/// One output of a group's call, to be split between its requests by rows.
pub struct BatchOutput {
    name: String,
    dtype: DataType,
    shape: Vec<i64>,
    data: Bytes,
    /// Byte offset of each string element's encoding (BYTES only).
    string_offsets: Option<Vec<usize>>,
}

impl BatchOutput {
    /// A fixed-size output whose bytes are `data` (often the framework's own
    /// buffer, owned through `Bytes::from_owner`).
    pub fn new(name: impl Into<String>, dtype: DataType, shape: Vec<i64>, data: Bytes) -> Self {
        Self {
            name: name.into(),
            dtype,
            shape,
            data,
            string_offsets: None,
        }
    }

    /// A BYTES output of `texts`, encoded in Triton's layout.
    pub fn strings<S: AsRef<[u8]>>(name: impl Into<String>, shape: Vec<i64>, texts: &[S]) -> Self {
        let mut offsets = Vec::with_capacity(texts.len() + 1);
        let mut at = 0;
        for text in texts {
            offsets.push(at);
            at += 4 + text.as_ref().len();
        }
        offsets.push(at);
        Self {
            name: name.into(),
            dtype: DataType::Bytes,
            shape,
            data: encode_bytes_elements(texts),
            string_offsets: Some(offsets),
        }
    }

    /// The output's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The part of the output for rows `start..start + rows` of the group,
    /// or the whole output when `rows` is `None` (a model that doesn't batch).
    pub fn rows(&self, start: usize, rows: Option<usize>) -> Result<Tensor> {
        let Some(rows) = rows else {
            return Ok(Tensor::new(
                &self.name,
                self.dtype,
                self.shape.clone(),
                self.data.clone(),
            ));
        };
        let total = self.shape.first().copied().unwrap_or(0).max(0) as usize;
        if start + rows > total {
            return Err(Error::internal(format!(
                "output '{}' has {total} rows for a batch of at least {}",
                self.name,
                start + rows
            )));
        }
        let per_row = element_count(&self.shape[1..]).unwrap_or(0);
        let (from, to) = match &self.string_offsets {
            Some(offsets) => (offsets[start * per_row], offsets[(start + rows) * per_row]),
            None => {
                let row_bytes = per_row * self.dtype.element_size().unwrap_or(0);
                (start * row_bytes, (start + rows) * row_bytes)
            }
        };
        let mut shape = self.shape.clone();
        shape[0] = rows as i64;
        Ok(Tensor::new(
            &self.name,
            self.dtype,
            shape,
            self.data.slice(from..to),
        ))
    }
}

/// Executes a batch with `run`, one call per group of requests that can share
/// one tensor per input (see [`group_by_layout`]): cancelled requests are
/// answered at once, the calls are timed as the compute phase, and each
/// request gets its rows of its group's outputs, or the group's error, as
/// soon as its group's call returns (a batch cut into runs of similar
/// lengths answers its short requests first).
pub fn execute_grouped(
    requests: Vec<BackendRequest>,
    batching: bool,
    timing: &mut ComputeTiming,
    mut run: impl FnMut(&[BackendRequest]) -> Result<Vec<BatchOutput>>,
) {
    let mut live = Vec::with_capacity(requests.len());
    for request in requests {
        if request.sink.is_cancelled() {
            request.sink.respond(Err(Error::new(
                ErrorKind::Cancelled,
                "request was cancelled",
            )));
        } else {
            live.push(request);
        }
    }
    timing.start_compute();
    timing.end_compute(); // moved on by each run: the compute phase ends with the last
    for group in group_by_layout(live, batching) {
        let result = run(&group);
        timing.end_compute();
        answer_group(group, result, batching);
    }
}

/// Splits a batch into runs of requests that can share one tensor per input:
/// the same inputs with the same shapes beyond the batch dimension. Without
/// batching every request runs alone.
fn group_by_layout(requests: Vec<BackendRequest>, batching: bool) -> Vec<Vec<BackendRequest>> {
    let mut groups: Vec<Vec<BackendRequest>> = Vec::new();
    for request in requests {
        let joins = batching
            && groups
                .last()
                .is_some_and(|group| same_layout(&group[0], &request));
        match groups.last_mut() {
            Some(group) if joins => group.push(request),
            _ => groups.push(vec![request]),
        }
    }
    groups
}

/// Sends each request of `group` its rows of the outputs it asked for, or
/// the group's error.
fn answer_group(group: Vec<BackendRequest>, result: Result<Vec<BatchOutput>>, batching: bool) {
    let outputs = match result {
        Ok(outputs) => outputs,
        Err(error) => {
            for request in group {
                request.sink.respond(Err(error.clone()));
            }
            return;
        }
    };
    let mut start = 0;
    for request in group {
        let rows = batching.then(|| request.batch_size());
        let response = outputs
            .iter()
            .filter(|o| request.wants_output(o.name()))
            .map(|o| o.rows(start, rows))
            .collect::<Result<Vec<_>>>()
            .map(BackendResponse::new);
        start += rows.unwrap_or(0);
        request.sink.respond(response);
    }
}

fn same_layout(a: &BackendRequest, b: &BackendRequest) -> bool {
    let (a, b) = (&a.request.inputs, &b.request.inputs);
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.name == y.name
                && x.datatype == y.datatype
                && x.shape.len() == y.shape.len()
                && x.shape.get(1..) == y.shape.get(1..)
        })
}

#[cfg(test)]
mod tests {
    use oxiserve_types::InferRequest;

    use super::*;
    use crate::testing::{collecting_request, fp32_data};

    fn rows(n: i64, width: i64) -> InferRequest {
        let values = (0..n * width).map(|v| v as f32);
        let x = Tensor::new("X", DataType::Fp32, vec![n, width], fp32_data(values));
        InferRequest {
            inputs: vec![x],
            ..Default::default()
        }
    }

    #[test]
    fn each_group_is_answered_before_the_next_one_runs() {
        // Two requests of width 2, then one of width 3: two groups.
        let (a, got_a) = collecting_request(rows(1, 2), &["Y"]);
        let (b, got_b) = collecting_request(rows(2, 2), &["Y"]);
        let (c, got_c) = collecting_request(rows(1, 3), &["Y"]);
        let mut seen = Vec::new();
        let mut timing = ComputeTiming::default();
        execute_grouped(vec![a, b, c], true, &mut timing, |group| {
            let answered = [&got_a, &got_b, &got_c].map(|g| g.lock().len());
            seen.push((group.len(), answered));
            let x = &group[0].request.inputs[0];
            let total: i64 = group.iter().map(|r| r.request.inputs[0].shape[0]).sum();
            let data: Vec<u8> = group
                .iter()
                .flat_map(|r| r.request.inputs[0].data.to_vec())
                .collect();
            Ok(vec![BatchOutput::new(
                "Y",
                x.datatype,
                vec![total, x.shape[1]],
                Bytes::from(data),
            )])
        });
        assert_eq!(seen, [(2, [0, 0, 0]), (1, [1, 1, 0])]);
        for (got, shape) in [(&got_a, [1, 2]), (&got_b, [2, 2]), (&got_c, [1, 3])] {
            let events = got.lock();
            let response = events[0].response.as_ref().unwrap().as_ref().unwrap();
            assert_eq!(response.outputs[0].shape, shape);
        }
        let (start, end) = (
            timing.compute_start().unwrap(),
            timing.compute_end().unwrap(),
        );
        assert!(start <= end);
    }

    #[test]
    fn rows_slice_fixed_size_and_string_outputs() {
        let floats: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let out = BatchOutput::new("Y", DataType::Fp32, vec![2, 2], Bytes::from(floats));
        let second = out.rows(1, Some(1)).unwrap();
        assert_eq!(second.shape, [1, 2]);
        assert_eq!(
            &second.data[..],
            &[3.0f32, 4.0].map(f32::to_le_bytes).concat()[..]
        );
        assert!(out.rows(1, Some(2)).is_err(), "past the last row");
        assert_eq!(out.rows(0, None).unwrap().shape, [2, 2]);

        let texts = BatchOutput::strings("S", vec![2, 1], &["a", "bcd"]);
        let row = texts.rows(1, Some(1)).unwrap();
        assert_eq!(&row.data[..], b"\x03\x00\x00\x00bcd");
    }
}
