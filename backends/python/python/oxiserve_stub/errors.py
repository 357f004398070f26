"""TritonError, TritonModelException and the formatting of exception texts."""

import os

from .argcheck import as_int, as_str


class TritonModelException(Exception):
    """What models raise (and what our API raises on misuse)."""


class TritonError:
    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    __slots__ = ("_message", "_code")

    def __init__(self, message, code=1):
        # as pybind11 converts Triton's (std::string message, error code): TypeError for
        # a message that is no str or bytes, a code that is no integer
        self._message = as_str(message, "TritonError", "message")
        self._code = as_int(code, "TritonError", "code", 0, 0xFFFFFFFF)

    def message(self):
        return self._message

    def code(self):
        return self._code

    def __repr__(self):
        return "TritonError(%r, %d)" % (self._message, self._code)


_OUR_DIR = os.path.dirname(os.path.abspath(__file__))
_OUR_FILES = (_OUR_DIR, os.path.join(os.path.dirname(_OUR_DIR), "triton_python_backend_utils.py"),
              os.path.join(os.path.dirname(_OUR_DIR), "c_python_backend_utils.py"))

# Whether exception texts carry pybind11's "\n\nAt:\n  file(line): func\n" trace, as
# pybind11 2.12's error_already_set::what() (used by Triton's stub) produces.
INCLUDE_TRACE = True


def _ours(filename):
    return filename.startswith(_OUR_FILES)


def format_exception(exc):
    """The text Triton's stub gets from pybind11 for a Python exception raised by user code:
    ``<type name>: <str(exc)>`` then, when a traceback exists, ``\\n\\nAt:\\n`` and one
    ``  <file>(<line>): <function>\\n`` line per frame from the innermost outwards (frames of
    our own package are left out: in Triton they are C++; so are frames of importlib and
    other frozen modules, whose file names start with '<')."""
    msg = str(exc)
    if not msg:
        msg = "<EMPTY MESSAGE>"
    text = "%s: %s" % (type(exc).__name__, msg)
    tb = exc.__traceback__
    if INCLUDE_TRACE and tb is not None:
        while tb.tb_next is not None:
            tb = tb.tb_next
        lines = []
        frame = tb.tb_frame
        seen_user = False
        while frame is not None:
            fn = frame.f_code.co_filename
            if fn.startswith("<"):
                pass  # importlib / frozen modules: C++ or hidden in Triton
            elif _ours(fn):
                if seen_user:
                    break
            else:
                seen_user = True
                lineno = tb.tb_lineno if frame is tb.tb_frame else frame.f_lineno
                lines.append("  %s(%d): %s\n" % (fn, lineno, frame.f_code.co_name))
            frame = frame.f_back
        if lines:
            text += "\n\nAt:\n" + "".join(lines)
    return text
