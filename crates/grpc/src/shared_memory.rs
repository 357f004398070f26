//! The system shared memory extension over the core's region registry, and
//! the CUDA one answered as a Triton built without GPU support answers.

use oxiserve_core::{Server, cuda_register, cuda_status};
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

/// `SystemSharedMemoryUnregister`: one region, or all of them.
pub(crate) fn system_unregister(server: &Server, request: SystemSharedMemoryUnregisterRequest) {
    match named(&request.name) {
        Some(name) => server.shared_memory().unregister(name),
        None => server.shared_memory().unregister_all(),
    }
}

/// `CudaSharedMemoryStatus`: no CUDA region exists in this build.
pub(crate) fn cuda_status_of(
    request: CudaSharedMemoryStatusRequest,
) -> Result<CudaSharedMemoryStatusResponse> {
    cuda_status(named(&request.name))?;
    Ok(CudaSharedMemoryStatusResponse::default())
}

/// `CudaSharedMemoryRegister`: refused in this build.
pub(crate) fn cuda_register_region(request: CudaSharedMemoryRegisterRequest) -> Result<()> {
    cuda_register(&request.name)
}
