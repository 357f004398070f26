"""DLPack capsules for BF16 tensors, which numpy cannot describe.

numpy exports and imports DLPack for its own dtypes only. A BF16 tensor is held as a
uint16 array; its capsule is numpy's with the DLTensor's dtype changed to bfloat16 before
anyone consumes it, and a bfloat16 capsule from elsewhere (PyTorch, Triton's own) is read
by numpy once its dtype says uint16. Only the dtype field is touched: the data, shape and
deleter stay the producer's.

User-facing only; imports nothing of ours.
"""

import ctypes

# DLDataType codes (dlpack.h)
_KDL_UINT = 1
_KDL_BFLOAT = 4

# Where the DLTensor starts in what a capsule points to: a DLManagedTensor ("dltensor")
# begins with it; a DLManagedTensorVersioned ("dltensor_versioned") has a version, the
# manager context, the deleter and flags before it.
_TENSOR_AT = {b"dltensor": 0, b"dltensor_versioned": 32}
# DLTensor: void *data; DLDevice device (2 x int32); int32 ndim; DLDataType dtype ...
_DTYPE_AT = 20

_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


def is_capsule(obj):
    return type(obj).__name__ == "PyCapsule"


def _dtype(capsule):
    """The DLDataType of an unconsumed DLPack capsule, or None."""
    name = _api.PyCapsule_GetName(capsule)
    at = _TENSOR_AT.get(name)
    if at is None:
        return None
    pointer = _api.PyCapsule_GetPointer(capsule, name)
    if not pointer:
        return None
    return _DLDataType.from_address(pointer + at + _DTYPE_AT)


def _retag(capsule, code_from, code_to):
    """Changes the capsule's 16-bit dtype code `code_from` to `code_to`; whether it did."""
    dtype = _dtype(capsule)
    if dtype is None or (dtype.code, dtype.bits, dtype.lanes) != (code_from, 16, 1):
        return False
    dtype.code = code_to
    return True


def bf16_capsule(u16_array):
    """A DLPack capsule of a uint16 array that says bfloat16."""
    capsule = u16_array.__dlpack__()
    if not _retag(capsule, _KDL_UINT, _KDL_BFLOAT):
        raise BufferError("numpy exported an unexpected DLPack capsule")
    return capsule


def take_bf16(capsule):
    """Whether `capsule` holds bfloat16 data; when it does, it now says uint16 (numpy can
    import it)."""
    return _retag(capsule, _KDL_BFLOAT, _KDL_UINT)
