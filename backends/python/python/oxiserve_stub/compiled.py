"""The compiled hot path (`_frames.c`): Execute decoding and ExecuteDone encoding, and
lane call and answer frames.

FRAMES is None where the module was not built (no C compiler or Python headers at build
time) or cannot load in this interpreter (older than 3.11); execute_frame.py and
response_frames.py then run their Python equivalents.
"""

import numpy as np

from .messages import InferenceRequest, InferenceResponse
from .tensors import WIRE_NP, Tensor


def bind(module):
    """Gives a loaded `_frames` module the classes it builds; returns it."""
    module.setup(Tensor, InferenceRequest, InferenceResponse, np.ndarray,
                 tuple(WIRE_NP.get(code) for code in range(15)))
    return module


try:
    from . import _frames
except ImportError:
    FRAMES = None
else:
    FRAMES = bind(_frames)
