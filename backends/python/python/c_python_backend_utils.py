"""Alias of the classes Triton's pybind11 module `c_python_backend_utils` provides."""

from oxiserve_stub.errors import TritonError, TritonModelException  # noqa: F401
from oxiserve_stub.tensors import Tensor  # noqa: F401
from oxiserve_stub.messages import (  # noqa: F401
    InferenceRequest, InferenceResponse, InferenceTrace, MemoryType, PreferredMemory,
    InferenceResponseSender, TRITONSERVER_MEMORY_CPU, TRITONSERVER_MEMORY_GPU)
from oxiserve_stub.bls import ResponseIterator  # noqa: F401
from oxiserve_stub.log import Logger, LogLevel  # noqa: F401
from oxiserve_stub.metrics import Metric, MetricFamily, MetricKind  # noqa: F401
from triton_python_backend_utils import load_model, unload_model, is_model_ready  # noqa: F401
