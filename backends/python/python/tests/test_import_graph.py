"""The stub's modules import one another one way only: the import graph of oxiserve_stub
(plus triton_python_backend_utils and c_python_backend_utils next to it) has no cycle.

Every import counts, wherever it is written: at the top of a module, inside a function
(a cycle dodged by a function-local import is still a cycle), relative or absolute,
`import a.b`, `from a import b`, `from . import b`, and importlib.import_module /
__import__ with a constant name.
"""

import ast
import os

from conftest import PKG_PARENT

PACKAGE = "oxiserve_stub"
TOP_LEVEL = ("triton_python_backend_utils", "c_python_backend_utils")


def package_modules(parent=PKG_PARENT, package=PACKAGE, top_level=TOP_LEVEL):
    """{module name: source file} for the package's modules and the top-level ones."""
    mods = {}
    pkg_dir = os.path.join(parent, package)
    for name in sorted(os.listdir(pkg_dir)):
        if name.endswith(".py"):
            stem = name[:-3]
            mods[package if stem == "__init__" else package + "." + stem] = os.path.join(
                pkg_dir, name)
        elif name.endswith((".c", ".so")):  # compiled (_frames): imports none of ours
            mods.setdefault(package + "." + name.split(".")[0], None)
    for name in top_level:
        path = os.path.join(parent, name + ".py")
        if os.path.isfile(path):
            mods[name] = path
    return mods


def _resolve_relative(module, is_package, level, target):
    """The absolute name of `from <level dots><target> import ...` in `module`."""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        parts = parts[:len(parts) - (level - 1)]
    base = ".".join(parts)
    if target:
        return base + "." + target if base else target
    return base


def _imports(module, is_package, tree, mods):
    """The modules of `mods` that `tree` imports by name. (Importing a submodule runs its
    package's __init__ first: that implicit import is not an edge, a name taken from the
    package is.)"""
    deps = set()

    def add(name):
        while name and name not in mods:  # `import a.b.attr`: the module a.b
            name = name.rpartition(".")[0]
        if name and name != module:
            deps.add(name)

    for node in ast.walk(tree):  # the whole tree: function-local imports too
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            else:
                base = node.module
            for alias in node.names:
                sub = base + "." + alias.name if base else alias.name
                add(sub if sub in mods else base)  # a submodule, or a name of base
        elif isinstance(node, ast.Call) and node.args:
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            arg = node.args[0]
            if (fname in ("import_module", "__import__") and isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)):
                add(arg.value)
    return deps


def import_graph(mods):
    """{module: sorted list of the modules of `mods` it imports}."""
    graph = {}
    for module, path in mods.items():
        if path is None:
            graph[module] = []
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        is_package = os.path.basename(path) == "__init__.py"
        graph[module] = sorted(_imports(module, is_package, tree, mods))
    return graph


def find_cycle(graph):
    """One import cycle as a list [m1, m2, ..., m1], or None."""
    white, grey, black = 0, 1, 2
    color = {m: white for m in graph}
    stack = []

    def visit(m):
        color[m] = grey
        stack.append(m)
        for d in graph[m]:
            if color[d] == grey:
                return stack[stack.index(d):] + [d]
            if color[d] == white:
                cycle = visit(d)
                if cycle:
                    return cycle
        stack.pop()
        color[m] = black
        return None

    for m in sorted(graph):
        if color[m] == white:
            cycle = visit(m)
            if cycle:
                return cycle
    return None


def test_stub_imports_form_a_dag():
    graph = import_graph(package_modules())
    # not vacuous: the graph sees top-level, relative and function-local imports
    assert "oxiserve_stub.conn" in graph["oxiserve_stub.instance"]
    assert "oxiserve_stub.instance" in graph["oxiserve_stub.zygote"]  # function-local
    assert "oxiserve_stub.messages" in graph["triton_python_backend_utils"]
    assert graph["oxiserve_stub.compiled"] == [  # `from . import _frames`, relative
        "oxiserve_stub._frames", "oxiserve_stub.messages", "oxiserve_stub.tensors"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_transport_and_user_types_apart():
    """The transport (frames, socket, arenas) imports none of pb_utils' types; those reach
    the instance only through the Context they are given, never the transport."""
    graph = import_graph(package_modules())
    transport = {"oxiserve_stub.protocol", "oxiserve_stub.arena", "oxiserve_stub.inbox",
                 "oxiserve_stub.conn"}
    user_types = {"oxiserve_stub.errors", "oxiserve_stub.tensors", "oxiserve_stub.messages",
                  "oxiserve_stub.log", "oxiserve_stub.argcheck",
                  "oxiserve_stub.dlpack", "oxiserve_stub.model_control"}
    for m in sorted(transport):
        wrong = sorted(set(graph[m]) - transport)
        assert not wrong, "%s (transport) imports %s" % (m, ", ".join(wrong))
    for m in sorted(user_types):
        wrong = sorted(set(graph[m]) - user_types)
        assert not wrong, "%s (user-facing) imports %s" % (m, ", ".join(wrong))


def test_cycle_found_through_function_local_and_relative_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("import os\n\ndef f():\n    from pkg import c\n")
    (pkg / "c.py").write_text("def g():\n    import importlib\n"
                              "    return importlib.import_module('pkg.a')\n")
    (pkg / "d.py").write_text("import pkg.c\n")
    (pkg / "e.py").write_text("from pkg import VERSION\n")
    graph = import_graph(package_modules(str(tmp_path), "pkg", ()))
    assert graph == {"pkg": ["pkg.a"], "pkg.a": ["pkg.b"], "pkg.b": ["pkg.c"],
                     "pkg.c": ["pkg.a"], "pkg.d": ["pkg.c"], "pkg.e": ["pkg"]}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text("")
    assert find_cycle(import_graph(package_modules(str(tmp_path), "pkg", ()))) is None
