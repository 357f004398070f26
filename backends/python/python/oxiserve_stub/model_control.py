"""pb_utils.load_model, unload_model and is_model_ready: a model loads, unloads and checks
models of the server, with the errors Triton's stub raises.

User-facing. In an instance process the entry point gives the instance's Context to
`Models._ctx`. A failure of the server is raised as TritonModelException, worded as
Triton's stub words it: "<what failed>: Failed to process the request for model
'<instance>', message: <the server's text>".
"""

from .argcheck import CAST, as_str, fail
from .errors import TritonModelException


class Models:
    """Where the functions reach the instance."""

    _ctx = None  # the instance's Context: set once by the entry point (instance.serve)


def _context():
    ctx = Models._ctx
    if ctx is None:
        raise TritonModelException("model control needs a model instance")
    return ctx


def _server_error(ctx, what, message):
    return TritonModelException(
        "%s: Failed to process the request for model '%s', message: %s"
        % (what, ctx.instance_name, message))


def _as_bool(value, function, argument):
    """A C++ bool argument: True or False, or a number (numpy booleans, integers, floats)
    taken by its truth value; never None, a string or a container."""
    if value is True or value is False:
        return value
    if value is None or isinstance(value, (str, bytes, bytearray)):
        fail(function, argument, value)
    try:
        return bool(float(value))
    except (TypeError, ValueError):
        fail(function, argument, value)


def _files(model_name, files):
    """The items of `files` as (name, bytes) pairs, checked as Triton's stub checks them."""
    if files is None:
        return []
    if not isinstance(files, dict):
        raise TritonModelException(
            "failed to load model '%s', files should be a dictionary of file paths and file "
            "contents" % model_name)
    items = []
    for name, contents in files.items():
        if isinstance(name, bytes):
            name = name.decode("utf-8", "replace")
        if not isinstance(name, str) or not isinstance(contents, bytes):
            raise RuntimeError(CAST)
        items.append((name, contents))
    return items


def load_model(model_name, config="", files=None):
    model_name = as_str(model_name, "load_model", "model_name")
    config = as_str(config, "load_model", "config")
    items = _files(model_name, files)
    ctx = _context()
    error = ctx.load_model(model_name, config, items)
    if error is not None:
        raise _server_error(ctx, "Failed to load model", error)


def unload_model(model_name, unload_dependents=False):
    model_name = as_str(model_name, "unload_model", "model_name")
    unload_dependents = _as_bool(unload_dependents, "unload_model", "unload_dependents")
    ctx = _context()
    error = ctx.unload_model(model_name, unload_dependents)
    if error is not None:
        raise _server_error(ctx, "Failed to unload model", error)


def is_model_ready(model_name, model_version=""):
    model_name = as_str(model_name, "is_model_ready", "model_name")
    model_version = as_str(model_version, "is_model_ready", "model_version")
    ctx = _context()
    error, ready = ctx.is_model_ready(model_name, model_version)
    if error is not None:
        raise _server_error(ctx, "Failed to check model readiness", error)
    return ready
