//! System shared memory (`--shared-memory system`): every request's inputs
//! are written once into a POSIX shared memory object (a file under
//! /dev/shm, what `shm_open` creates on Linux), and each output gets a slot
//! in a second one; requests then name regions instead of carrying data.

use oxiserve_client::shm::SystemSharedMemoryRegion;
use oxiserve_types::element_count;

use crate::{
    error::{Error, Result},
    inputs::InputTensor,
    model::ModelInfo,
};

/// Where one tensor lives: region name, offset and size in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub region: String,
    pub offset: u64,
    pub size: u64,
}

/// The shared memory behind a run; the objects are removed on drop.
#[derive(Debug)]
pub struct SharedMemory {
    /// Per request, per input (in the request's input order).
    pub inputs: Vec<Vec<Placement>>,
    /// Each model output and its slot.
    pub outputs: Vec<(String, Placement)>,
    /// The inputs' region, then the outputs'.
    pub regions: [SystemSharedMemoryRegion; 2],
}

impl SharedMemory {
    /// Writes the inputs of every request into one object and sizes one for
    /// the outputs: fixed-size outputs take what the model's dims say (with
    /// the request's batch), the others `output_size` bytes.
    pub fn create(
        model: &ModelInfo,
        steps: &[Vec<InputTensor>],
        batch_size: u32,
        output_size: u64,
    ) -> Result<Self> {
        let prefix = format!("oxiserve_perf_{}", std::process::id());
        let (input_name, output_name) = (format!("{prefix}_input"), format!("{prefix}_output"));
        let mut data = Vec::new();
        let inputs = steps
            .iter()
            .map(|step| {
                step.iter()
                    .map(|t| {
                        let placement = Placement {
                            region: input_name.clone(),
                            offset: data.len() as u64,
                            size: t.data.len() as u64,
                        };
                        data.extend_from_slice(&t.data);
                        placement
                    })
                    .collect()
            })
            .collect();
        let mut offset = 0;
        let outputs = model
            .outputs
            .iter()
            .map(|o| {
                let mut shape = o.dims.clone();
                if model.batch.is_batching() {
                    shape.insert(0, i64::from(batch_size));
                }
                let fixed = o
                    .datatype
                    .element_size()
                    .zip(element_count(&shape).filter(|_| !shape.contains(&-1)));
                let size = fixed.map_or(output_size, |(e, n)| (e * n) as u64);
                let placement = Placement {
                    region: output_name.clone(),
                    offset,
                    size,
                };
                offset += size;
                (o.name.clone(), placement)
            })
            .collect();
        let region = |name: String, size| {
            SystemSharedMemoryRegion::create(&name, &format!("/{name}"), size)
                .map_err(|e| Error::new(format!("cannot create shared memory: {e}")))
        };
        let regions = [
            region(input_name, data.len() as u64)?,
            region(output_name, offset)?,
        ];
        regions[0].write(0, &data)?;
        Ok(SharedMemory {
            inputs,
            outputs,
            regions,
        })
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use oxiserve_config::BatchPlan;
    use oxiserve_types::DataType;

    use super::*;
    use crate::model::TensorInfo;

    #[test]
    fn inputs_are_laid_out_in_order_and_outputs_sized() {
        let tensor = |name: &str, datatype, dims: Vec<i64>| TensorInfo {
            name: name.into(),
            datatype,
            dims,
        };
        let model = ModelInfo {
            name: "m".into(),
            batch: BatchPlan::with_max_batch_size(8),
            decoupled: false,
            sequence: false,
            inputs: vec![tensor("IN", DataType::Int32, vec![2])],
            outputs: vec![
                tensor("OUT", DataType::Int32, vec![2]),
                tensor("S", DataType::Bytes, vec![1]),
            ],
        };
        let input = |v: u8| InputTensor {
            name: "IN".into(),
            datatype: DataType::Int32,
            shape: vec![1, 2],
            data: Bytes::from(vec![v; 8]),
        };
        let memory =
            SharedMemory::create(&model, &[vec![input(1)], vec![input(2)]], 3, 100).unwrap();
        assert_eq!(memory.inputs[1][0].offset, 8);
        assert_eq!(memory.outputs[0].1.size, 24);
        assert_eq!(
            (memory.outputs[1].1.offset, memory.outputs[1].1.size),
            (24, 100)
        );
        let file = std::path::PathBuf::from(format!("/dev/shm{}", memory.regions[0].key()));
        let written = std::fs::read(&file).unwrap();
        assert_eq!(written[7..9], [1, 2]);
        assert_eq!(memory.regions[1].byte_size(), 124);
        drop(memory);
        assert!(!file.exists());
    }
}
