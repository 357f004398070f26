"""Import cycles among the modules of one Python package, for check_layout.py
(whose docstring defines them)."""

import ast
import os

from layout_graph import cycles


def package_modules(package_dir):
    """{dotted module name: file} of the package's .py files."""
    package = os.path.basename(package_dir)
    modules = {}
    for directory, subdirs, files in os.walk(package_dir):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(directory, name), package_dir)
            parts = [package] + rel[: -len(".py")].split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = os.path.join(directory, name)
    return modules


def _deepest(modules, parts):
    """The longest dotted prefix of `parts` that is a module of the package."""
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in modules:
            return ".".join(parts[:k])
    return None


def _imported(node, module, is_package):
    """[(dotted path, name)] an import names, absolute: an `import` or `from ..
    import` statement, or `importlib.import_module`/`__import__` of a constant."""
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        first = node.args[0] if node.args else None
        if name in ("import_module", "__import__") and isinstance(first, ast.Constant):
            if isinstance(first.value, str) and not first.value.startswith("."):
                return [(first.value, first.value)]
        return []
    if isinstance(node, ast.Import):
        return [(alias.name, alias.name) for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
    else:
        base = []
    base = base + (node.module.split(".") if node.module else [])
    return [(".".join(base + [alias.name]), alias.name) for alias in node.names]


def import_edges(modules):
    """{(from module, to module): {names}}: every import, wherever it is
    (module level, function, `if TYPE_CHECKING`), resolved to the deepest
    module of the package it names."""
    found = {}
    for module, file in modules.items():
        is_package = file.endswith("__init__.py")
        with open(file, encoding="utf-8") as f:
            tree = ast.parse(f.read(), file)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom, ast.Call)):
                continue
            for dotted, name in _imported(node, module, is_package):
                target = _deepest(modules, dotted.split("."))
                if target and target != module:
                    found.setdefault((module, target), set()).add(name)
    return found


def check_package(package_dir):
    """Each import cycle of the package, as `a.py -> b.py -> a.py (names: ..)`."""
    modules = package_modules(package_dir)
    found = import_edges(modules)
    graph = {}
    for a, b in found:
        graph.setdefault(a, set()).add(b)

    def rel(module):
        return os.path.relpath(modules[module], package_dir)

    problems = []
    for loop in cycles(graph):
        steps = zip(loop, loop[1:])
        names = "; ".join(f"{rel(a)} -> {rel(b)}: {', '.join(sorted(found[(a, b)]))}" for a, b in steps)
        problems.append(f"{' -> '.join(rel(m) for m in loop)} (names: {names})")
    return problems
