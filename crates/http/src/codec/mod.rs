//! KServe v2 JSON and binary tensor data: HTTP bodies <-> core types.
