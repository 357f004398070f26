"""The models of the main test repository, and test data for each datatype."""

import numpy as np
from tritonclient.utils import serialize_byte_tensor, serialized_byte_size

from models import DATATYPES, ModelSpec, Tensor, identity

# numpy type the client uses for each datatype (BF16 travels as float32).
NUMPY = {
    "BOOL": np.bool_,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
    "BYTES": np.object_,
    "BF16": np.float32,
}

KOREAN = ["안녕하세요", "", "슈퍼 엔저 장기화에…한국 수출∙경상수지에 비상등", "x"]
LABELS = ["zero", "one", "two", "three"]


def sample(datatype, rows=3, cols=4, binary=True):
    """A [rows, cols] array of `datatype` with edge values (min/max, text)."""
    n = rows * cols
    if datatype == "BYTES":
        words = [s.encode("utf-8") for s in KOREAN] + [b"", b"tail"]
        if binary:
            words.append(b"\x00\xff raw")  # not UTF-8: binary form only
        flat = [words[i % len(words)] for i in range(n)]
        return np.array(flat, dtype=np.object_).reshape(rows, cols)
    if datatype == "BOOL":
        return (np.arange(n) % 3 == 0).reshape(rows, cols)
    dtype = NUMPY[datatype]
    if datatype == "BF16":  # values a bfloat16 holds exactly
        flat = np.array([0.5, -2.0, 3.0, 1024.0, -0.15625, 7.0], dtype=np.float32)
    elif datatype.startswith("FP"):
        info = np.finfo(dtype)
        flat = np.array([0.1, -2.25, info.max, info.tiny, -0.0, 1 / 3], dtype=dtype)
    else:
        info = np.iinfo(dtype)
        flat = np.array([info.min, info.max, 0, 1, 42, info.max // 3], dtype=dtype)
    return np.resize(flat, n).reshape(rows, cols)


def tensor_bytes(array):
    """(what to copy into a region, its byte size) for `array`."""
    if array.dtype == np.object_:
        serialized = serialize_byte_tensor(array)
        return serialized, serialized_byte_size(serialized)
    return array, array.nbytes


def _classify():
    spec = identity("classify", "FP32")
    spec.outputs[0].extra = 'label_filename: "labels.txt"'
    spec.files = {"labels.txt": "\n".join(LABELS) + "\n"}
    return spec


def no_backend_model(name="nobackend"):
    """A model whose backend does not exist: it fails to load on any server."""
    return ModelSpec(name, [Tensor("INPUT0", "FP32", [-1])], max_batch_size=8,
                     backend="no_such_backend")


def main_models():
    """Every model of the session's main server."""
    specs = [identity(f"id_{dt.lower()}", dt) for dt in DATATYPES]
    specs.append(
        ModelSpec(
            "nobatch_all",
            [Tensor(f"INPUT{i}", dt, [-1, -1]) for i, dt in enumerate(DATATYPES)],
        )
    )
    specs.append(
        ModelSpec(
            "pair",
            [Tensor("INPUT0", "INT32", [-1]), Tensor("INPUT1", "FP32", [-1])],
            max_batch_size=8,
        )
    )
    specs.append(
        identity("versioned", "INT32", versions=(1, 2, 3),
                 extra_config="version_policy: { all { } }")
    )
    specs.append(identity("stats_model", "INT32"))
    specs.append(identity("stats_idle", "INT32"))
    specs.append(
        identity("concurrent", "INT32", max_batch_size=16, execute_delay_ms=2,
                 extra_config="dynamic_batching { }")
    )
    specs.append(_classify())
    return specs
