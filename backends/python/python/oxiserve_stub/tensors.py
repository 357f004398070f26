"""pb_utils.Tensor (a user-facing type), the dtype tables and Triton's BYTES layout.

Knows nothing of the arenas or the wire: how tensors get into and out of shared memory is
arena_io.py's."""

import struct

import numpy as np

from .argcheck import as_str, fail
from .dlpack import bf16_capsule, is_capsule, take_bf16
from .errors import TritonModelException

BOOL, UINT8, UINT16, UINT32, UINT64 = 1, 2, 3, 4, 5
INT8, INT16, INT32, INT64 = 6, 7, 8, 9
FP16, FP32, FP64, BYTES, BF16 = 10, 11, 12, 13, 14

# Triton dtype code -> numpy dtype of the wire bytes (BYTES: raw u8; BF16: raw u16).
WIRE_NP = {
    BOOL: np.dtype(np.bool_), UINT8: np.dtype(np.uint8), UINT16: np.dtype(np.uint16),
    UINT32: np.dtype(np.uint32), UINT64: np.dtype(np.uint64), INT8: np.dtype(np.int8),
    INT16: np.dtype(np.int16), INT32: np.dtype(np.int32), INT64: np.dtype(np.int64),
    FP16: np.dtype(np.float16), FP32: np.dtype(np.float32), FP64: np.dtype(np.float64),
    BYTES: np.dtype(np.uint8), BF16: np.dtype(np.uint16),
}
_NP_TO_CODE = {v: k for k, v in WIRE_NP.items() if k not in (BYTES, BF16)}

_U32 = struct.Struct("<I")
_NDARRAY = np.ndarray
_LITTLE = np.little_endian


def np_to_code(dtype):
    """Triton code of a numpy dtype, or None."""
    dtype = np.dtype(dtype)
    code = _NP_TO_CODE.get(dtype)
    if code is not None:
        return code
    if dtype.kind in "OSU":  # object, np.bytes_ or np.str_ (sent UTF-8 encoded)
        return BYTES
    if dtype.kind in "biuf" and dtype.byteorder not in "=|":
        return _NP_TO_CODE.get(dtype.newbyteorder("="))
    return None


def serialize_bytes(arr):
    """Triton's BYTES layout (u32 LE length + bytes per element, C order) as one bytes."""
    pack = _U32.pack
    parts = []
    append = parts.append
    if arr.dtype.kind in "OU":
        for x in arr.ravel(order="C").tolist():
            if type(x) is not bytes:
                x = str(x).encode("utf-8")
            append(pack(len(x)))
            append(x)
    else:
        for x in arr.ravel(order="C").tolist():
            append(pack(len(x)))
            append(x)
    return b"".join(parts)


def deserialize_bytes(buf, count=None):
    """Triton's BYTES layout -> 1-D object array of bytes (count elements, or all)."""
    b = bytes(buf)
    end = len(b)
    unpack = _U32.unpack_from
    out = []
    append = out.append
    p = 0
    while (p < end) if count is None else (len(out) < count):
        if p + 4 > end:
            raise TritonModelException("Invalid bytes tensor data: incomplete length field")
        n = unpack(b, p)[0]
        p += 4
        if p + n > end:
            raise TritonModelException(
                "Invalid bytes tensor data: string extends beyond buffer")
        append(b[p:p + n])
        p += n
    arr = np.empty(len(out), dtype=np.object_)
    if out:
        arr[:] = out
    return arr


class _DLPackCapsule:
    """Lets np.from_dlpack accept a bare DLPack capsule (CPU assumed)."""

    def __init__(self, capsule):
        self._c = capsule

    def __dlpack__(self, *args, **kwargs):
        return self._c

    def __dlpack_device__(self):
        return (1, 0)


class Tensor:
    """pb_utils.Tensor. Inputs wrap views into the shared arena (zero copy)."""

    __slots__ = ("_name", "_dtype", "_np", "_raw", "_dims", "__weakref__")

    def __init__(self, name, data):
        # pybind11's conversions first (TypeError: a str or bytes name, a numpy array),
        # then Triton's checks
        if name.__class__ is not str:
            name = as_str(name, "Tensor", "name")
        if data.__class__ is not _NDARRAY and not isinstance(data, _NDARRAY):
            fail("Tensor", "data", data)
        if name == "":
            raise TritonModelException("Tensor name cannot be an empty string.")
        arr = data
        code = np_to_code(arr.dtype)
        if code is None:
            raise TritonModelException(
                "Unsupported numpy data type '%s' for tensor '%s'." % (arr.dtype, name))
        if arr.dtype.byteorder == (">" if _LITTLE else "<"):
            arr = arr.astype(arr.dtype.newbyteorder("="))
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        self._name = name
        self._dtype = code
        self._np = arr
        self._raw = None
        self._dims = None

    @classmethod
    def _wire(cls, name, code, dims, raw):
        """An input tensor over arena bytes: raw is a numpy view (typed, or u8 for BYTES,
        u16 for BF16) whose base keeps the arena block alive."""
        t = cls.__new__(cls)
        t._name = name
        t._dtype = code
        t._dims = dims
        if code == BYTES or code == BF16:
            t._np = None
            t._raw = raw
        else:
            t._np = raw
            t._raw = None
        return t

    def name(self):
        return self._name

    def triton_dtype(self):
        return self._dtype

    def is_cpu(self):
        return True

    def shape(self):
        if self._np is not None:
            return list(self._np.shape)
        return list(self._dims)

    def as_numpy(self):
        a = self._np
        if a is None:
            if self._dtype == BF16:
                raise TritonModelException(
                    "Tensor dtype is BF16 and cannot be converted to NumPy. Use "
                    "to_dlpack() and from_dlpack() instead.")
            count = 1
            for d in self._dims:
                count *= d
            a = deserialize_bytes(self._raw, count).reshape(self._dims)
            self._np = a
        return a

    def data_ptr(self):
        a = self._np if self._np is not None else self._raw
        return a.ctypes.data

    def _capsule(self):
        if self._dtype == BYTES:
            raise TritonModelException("DLPack does not have support for string tensors.")
        a = self._np if self._np is not None else self._raw
        if not a.flags.writeable:  # (numpy's from_dlpack arrays): DLPack cannot say so
            a = a.copy()
        if self._np is not None:
            return a.__dlpack__()
        return bf16_capsule(a)  # BF16: a uint16 array, exported as bfloat16

    def to_dlpack(self):
        return self._capsule()

    def __dlpack__(self, stream=None):
        return self._capsule()

    def __dlpack_device__(self):
        return (1, 0)

    @staticmethod
    def from_dlpack(name, tensor):
        if name == "":
            raise TritonModelException("Tensor name cannot be an empty string.")
        if not hasattr(tensor, "__dlpack__"):
            if not is_capsule(tensor):
                raise TritonModelException(
                    "Provided tensor is not supported. Tensor must be a DLPack capsule "
                    "or have the `__dlpack__` and `__dlpack_device__` attributes.")
            capsule = tensor
        else:
            if hasattr(tensor, "__dlpack_device__"):
                dev = tensor.__dlpack_device__()
                if int(dev[0]) not in (1, 3):
                    raise TritonModelException(
                        "GPU tensors are not supported by oxiserve's Python backend")
            try:
                capsule = tensor.__dlpack__()
            except (BufferError, RuntimeError, TypeError, ValueError) as e:
                raise TritonModelException("Unable to convert the DLPack tensor: %s" % e)
        bf16 = take_bf16(capsule)  # then numpy reads it as uint16
        try:
            arr = np.from_dlpack(_DLPackCapsule(capsule))
        except (BufferError, RuntimeError, TypeError, ValueError) as e:
            raise TritonModelException("Unable to convert the DLPack tensor: %s" % e)
        if not bf16:
            return Tensor(name, arr)
        t = Tensor.__new__(Tensor)
        t._name = as_str(name, "Tensor.from_dlpack", "name")
        t._dtype = BF16
        t._np = None
        t._raw = np.ascontiguousarray(arr)
        t._dims = list(arr.shape)
        return t

    def __repr__(self):
        return "Tensor(%r, dtype=%d, shape=%r)" % (self._name, self._dtype, self.shape())
