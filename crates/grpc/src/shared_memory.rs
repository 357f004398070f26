//! The system shared memory extension over the core's region registry, and
//! the CUDA one answered as Triton answers on a machine without GPUs.

use oxiserve_core::Server;
use oxiserve_proto::inference::{
    CudaSharedMemoryRegisterRequest, CudaSharedMemoryStatusRequest, CudaSharedMemoryStatusResponse,
    SystemSharedMemoryRegisterRequest, SystemSharedMemoryStatusRequest,
    SystemSharedMemoryStatusResponse, SystemSharedMemoryUnregisterRequest,
    system_shared_memory_status_response::RegionStatus,
};
use oxiserve_types::Result;

/// An empty name means every region.
fn named(name: &str) -> Option<&str> {
    (!name.is_empty()).then_some(name)
}

/// `SystemSharedMemoryStatus`: one region, or all of them.
pub(crate) fn system_status(
    server: &Server,
    request: SystemSharedMemoryStatusRequest,
) -> Result<SystemSharedMemoryStatusResponse> {
    let regions = server.shared_memory().status(named(&request.name))?;
    Ok(SystemSharedMemoryStatusResponse {
        regions: regions
            .into_iter()
            .map(|r| {
                let status = RegionStatus {
                    name: r.name.clone(),
                    key: r.key,
                    offset: r.offset,
                    byte_size: r.byte_size,
                };
                (r.name, status)
            })
            .collect(),
    })
}

/// `SystemSharedMemoryRegister`.
pub(crate) fn system_register(
    server: &Server,
    request: SystemSharedMemoryRegisterRequest,
) -> Result<()> {
    server.shared_memory().register(
        &request.name,
        &request.key,
        request.offset,
        request.byte_size,
    )
}

/// `SystemSharedMemoryUnregister`: one region, or all of them; a region
/// an inference uses stays, and that is Triton's `INTERNAL` error.
pub(crate) fn system_unregister(
    server: &Server,
    request: SystemSharedMemoryUnregisterRequest,
) -> Result<()> {
    match named(&request.name) {
        Some(name) => server.shared_memory().unregister(name),
        None => server.shared_memory().unregister_all(),
    }
}

/// `CudaSharedMemoryStatus`: no CUDA region exists without GPUs.
pub(crate) fn cuda_status_of(
    server: &Server,
    request: CudaSharedMemoryStatusRequest,
) -> Result<CudaSharedMemoryStatusResponse> {
    server.shared_memory().cuda_status(named(&request.name))?;
    Ok(CudaSharedMemoryStatusResponse::default())
}

/// `CudaSharedMemoryRegister`: refused, as Triton refuses it without GPUs
/// (the handle is not looked at: no GPU could open it).
pub(crate) fn cuda_register_region(
    server: &Server,
    request: CudaSharedMemoryRegisterRequest,
) -> Result<()> {
    server.shared_memory().cuda_register(&request.name)
}
