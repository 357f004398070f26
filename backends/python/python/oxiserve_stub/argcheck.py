"""The argument conversions pybind11 (2.10, Triton 2.51's stub) applies to pb_utils'
constructors and functions: an argument of the wrong type raises TypeError before the
function body runs (where Triton's own checks raise TritonModelException).

User-facing only; imports nothing of ours.
"""

import operator

_STRINGS = (str, bytes, bytearray)

# What pybind11 raises (as RuntimeError) when py::cast finds an object of another type.
CAST = ("Unable to cast Python instance to C++ type (#define "
        "PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)")


def fail(function, argument, value):
    raise TypeError("%s(): incompatible argument '%s' of type '%s'"
                    % (function, argument, type(value).__name__))


def as_str(value, function, argument):
    """A C++ std::string argument: str (numpy str_ too), or bytes / bytearray (numpy
    bytes_ too), decoded as UTF-8."""
    if value.__class__ is str:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    fail(function, argument, value)


def as_int(value, function, argument, low, high):
    """A C++ integer argument in [low, high]: an int or anything with __index__ (numpy
    integers); never a float or None."""
    if value.__class__ is int and low <= value <= high:
        return value
    if isinstance(value, float) or value is None:
        fail(function, argument, value)
    try:
        number = operator.index(value)
    except TypeError:
        fail(function, argument, value)
    if not low <= number <= high:
        fail(function, argument, value)
    return number


def as_sequence(value, function, argument):
    """A C++ std::vector argument: a sequence (list, tuple, ...) but not a string, a dict
    or a set, copied into a list."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if (value is None or isinstance(value, _STRINGS + (dict,))
            or not hasattr(type(value), "__getitem__")):
        fail(function, argument, value)
    try:
        return list(value)
    except TypeError:
        fail(function, argument, value)


def as_str_list(value, function, argument):
    if value.__class__ is list:
        for v in value:
            if v.__class__ is not str:
                break
        else:
            return value[:]
    return [as_str(v, function, argument) for v in as_sequence(value, function, argument)]


def as_objects(value, cls, function, argument):
    """A C++ std::vector<std::shared_ptr<cls>> argument: a sequence of `cls` objects or
    None (pybind11 turns None into a null pointer; the callee decides what that means)."""
    items = as_sequence(value, function, argument)
    for item in items:
        if item is not None and not isinstance(item, cls):
            fail(function, argument, item)
    return items
