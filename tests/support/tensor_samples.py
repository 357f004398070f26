"""Test tensors whose values every datatype holds exactly."""

import numpy as np


def sample(datatype, shape, seed):
    """Values every datatype holds exactly (BF16 and FP16 included)."""
    rng = np.random.default_rng(seed)
    if datatype == "BOOL":
        return rng.integers(0, 2, shape).astype(np.bool_)
    values = rng.integers(0, 8, shape)
    if datatype in ("FP16", "BF16", "FP32", "FP64"):
        numpy = {"FP16": np.float16, "FP64": np.float64}.get(datatype, np.float32)
        return ((values - 4) / 2).astype(numpy)
    return values.astype(np.dtype(datatype.lower()))
