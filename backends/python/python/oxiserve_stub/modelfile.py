"""Loading a model.py the way Triton's stub does (module `<version>.<stem>`)."""

import importlib
import importlib.machinery
import importlib.util
import os
import sys


class _SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Compiles model.py from its source every time, without __pycache__: a model.py edited
    within the same second to a text of the same size (then reloaded) would otherwise run
    the stale bytecode, as the .pyc check only compares whole-second mtimes and sizes."""

    def get_code(self, fullname):
        return self.source_to_code(self.get_data(self.path), self.path)


def load_model_module(path):
    path = os.path.abspath(path)
    version_dir = os.path.dirname(path)
    model_dir = os.path.dirname(version_dir)
    for d in (version_dir, model_dir):
        if d not in sys.path:
            sys.path.append(d)
    version = os.path.basename(version_dir)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = "%s.%s" % (version, stem)
    try:
        if version not in sys.modules:
            importlib.import_module(version)  # namespace package: relative imports work
    except Exception:
        name = stem
    spec = importlib.util.spec_from_file_location(
        name, path, loader=_SourceOnlyLoader(name, path))
    if spec is None:
        raise ImportError("cannot load the Python model file %s" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
