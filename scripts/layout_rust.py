"""The module graph of one Rust crate target and the layout rules on it, for
check_layout.py (whose docstring defines the rules)."""

import os
from dataclasses import dataclass

from layout_graph import cycles
from layout_rust_source import PATH_STARTS, scan

# Names of a room edge shown before "..".
SHOWN_NAMES = 6


@dataclass
class Module:
    """A module that is a file: `path` from the crate root, `rel` its file
    from the target's source folder."""

    path: tuple
    file: str
    rel: str
    test: bool
    source: object


def _child_dir(module, is_root):
    directory = os.path.dirname(module.file)
    if is_root or os.path.basename(module.file) == "mod.rs":
        return directory
    return os.path.join(directory, os.path.splitext(os.path.basename(module.file))[0])


def module_tree(root_file, src_dir, problems):
    """The file modules reachable from the crate root `root_file`, by path."""
    with open(root_file, encoding="utf-8") as f:
        root = Module((), root_file, os.path.relpath(root_file, src_dir), False, scan(f.read()))
    modules = {(): root}
    todo = [root]
    while todo:
        parent = todo.pop()
        for decl in parent.source.mods:
            if decl.inline or decl.scope:
                continue
            if decl.path_attr:
                candidates = [os.path.join(os.path.dirname(parent.file), decl.path_attr)]
            else:
                base = os.path.join(_child_dir(parent, parent is root), decl.name)
                candidates = [base + ".rs", os.path.join(base, "mod.rs")]
            found = [c for c in candidates if os.path.isfile(c)]
            if not found:
                continue
            if decl.test and not parent.test and decl.name != "tests":
                problems.append(
                    f"{parent.rel}:{decl.line}: test module `{decl.name}` is a file of its own; "
                    f"a module's tests are inline or in its own tests.rs (`#[cfg(test)] mod tests;`), "
                    f"their helpers under its tests/"
                )
            with open(found[0], encoding="utf-8") as f:
                source = scan(f.read())
            test = parent.test or decl.test or decl.name == "tests" or source.file_test
            child = Module(
                parent.path + (decl.name,), found[0], os.path.relpath(found[0], src_dir), test,
                source,
            )
            modules[child.path] = child
            todo.append(child)
    return modules


def _absolute(module, ref):
    """The path `ref` names, from the crate root, or None if not in this crate."""
    segments = ref.segments
    here = module.path + ref.scope
    first = segments[0]
    if first in ("crate", "$crate"):
        base, rest = (), segments[1:]
    elif first == "self":
        base, rest = here, segments[1:]
    elif first == "super":
        base, rest = here, segments
        while rest and rest[0] == "super":
            if not base:
                return None
            base, rest = base[:-1], rest[1:]
    elif any(d.name == first and d.scope == ref.scope for d in module.source.mods):
        base, rest = here, segments
    else:
        return None
    return base + tuple(s for s in rest if s != "self")


def _resolve(modules, absolute):
    """The deepest file module on `absolute`, and the name that follows it."""
    k = max(k for k in range(len(absolute) + 1) if absolute[:k] in modules)
    name = absolute[k] if k < len(absolute) else (absolute[-1] if absolute else "crate")
    return modules[absolute[:k]], name


def reexports(modules, module):
    """Names `module` re-exports (`pub use`, any visibility) from other
    modules of the crate -> the path they name."""
    names = {}
    for ref in module.source.paths:
        if not (ref.is_use and ref.is_pub) or ref.scope or ref.alias == "*":
            continue
        absolute = _absolute(module, ref)
        if absolute and _resolve(modules, absolute)[0] is not module:
            names[ref.alias] = absolute
    return names


def _defining(modules, exported, absolute):
    """The file module that defines what `absolute` names, following
    re-exports, and the name that follows it."""
    for _ in range(len(modules)):
        target, name = _resolve(modules, absolute)
        onward = exported[target.path].get(name)
        if onward is None or onward == absolute:
            return target, name
        absolute = onward + absolute[len(target.path) + 1 :]
    return target, name


def edges(modules):
    """{(from file, to file): {names}} between the files of non-test code. A
    re-export is wiring, not a use: it makes an edge only when the module's
    own code names the item too, and a path through a re-export leads to the
    module that defines the item."""
    exported = {path: reexports(modules, m) for path, m in modules.items()}
    found = {}
    for module in modules.values():
        if module.test:
            continue
        for ref in module.source.paths:
            if ref.is_use and ref.is_pub and module.source.identifiers.get(ref.alias, 0) < 2:
                continue
            absolute = _absolute(module, ref)
            if absolute is None:
                continue
            target, name = _defining(modules, exported, absolute)
            if target is not module and not target.test:
                found.setdefault((module.rel, target.rel), set()).add(name)
    return found


def reexport_problems(modules):
    """Code of the crate (not the root, not tests) naming a re-exported item
    through the crate root (`crate::Name`) instead of its defining module."""
    reexported, problems = reexports(modules, modules[()]), []
    for module in modules.values():
        if module.test or not module.path:
            continue
        for ref in module.source.paths:
            absolute = _absolute(module, ref) if ref.segments[0] in PATH_STARTS else None
            if absolute and absolute[0] in reexported and absolute[:1] not in modules:
                real = "::".join(reexported[absolute[0]])
                problems.append(
                    f"{module.rel}:{ref.line}: names `{absolute[0]}` through the crate root "
                    f"(crate::{absolute[0]}), which re-exports it: name crate::{real}"
                )
    return sorted(set(problems))


# std's locks poison on a panic; the workspace uses parking_lot's (rule 5).
STD_LOCKS = {"Mutex", "RwLock", "Condvar", "MutexGuard", "RwLockReadGuard", "RwLockWriteGuard"}


def std_lock_problems(modules):
    """Non-test code naming a lock of `std::sync`."""
    problems = []
    for module in modules.values():
        if module.test:
            continue
        for ref in module.source.paths:
            segments = ref.segments
            if segments[:2] == ["std", "sync"] and len(segments) > 2 and segments[2] in STD_LOCKS:
                problems.append(
                    f"{module.rel}:{ref.line}: std::sync::{segments[2]} poisons on a panic; "
                    f"use parking_lot::{segments[2]}"
                )
    return sorted(set(problems))


def _names(names):
    shown = sorted(names)
    return ", ".join(shown[:SHOWN_NAMES]) + (", .." if len(shown) > SHOWN_NAMES else "")


def file_cycle_problems(file_edges):
    graph = {}
    for a, b in file_edges:
        graph.setdefault(a, set()).add(b)
    problems = []
    for loop in cycles(graph):
        steps = zip(loop, loop[1:])
        names = "; ".join(f"{a} -> {b}: {_names(file_edges[(a, b)])}" for a, b in steps)
        problems.append(f"{' -> '.join(loop)} (names: {names})")
    return problems


def room_cycle_problems(modules, file_edges):
    """Cycles among the child modules ("rooms": a child's file and everything
    under it) of each module, where a room that is a folder takes part."""
    by_rel = {m.rel: m for m in modules.values()}
    folders = {m.path[:-1] for m in modules.values() if m.path and not m.test}
    problems = []
    for parent in sorted(folders):
        depth = len(parent)
        graph, witnesses = {}, {}
        for (a, b), names in file_edges.items():
            pa, pb = by_rel[a].path, by_rel[b].path
            if len(pa) > depth and len(pb) > depth and pa[:depth] == parent == pb[:depth]:
                ra, rb = pa[depth], pb[depth]
                if ra != rb:
                    graph.setdefault(ra, set()).add(rb)
                    witnesses.setdefault((ra, rb), set()).update(names)
        label = "::".join(("crate",) + parent)
        for loop in cycles(graph):
            if not any(parent + (room,) in folders for room in loop):
                continue  # only files: a file cycle, reported as such
            shown = [room + ("/" if parent + (room,) in folders else "") for room in loop]
            names = "; ".join(
                f"{a} -> {b}: {_names(witnesses[(a, b)])}" for a, b in zip(loop, loop[1:])
            )
            problems.append(f"rooms under {label}: {' -> '.join(shown)} (names: {names})")
    return problems


def check_target(root_file):
    """Every layout problem of the crate target whose root is `root_file`."""
    src_dir = os.path.dirname(root_file)
    problems = []
    modules = module_tree(root_file, src_dir, problems)
    file_edges = edges(modules)
    problems += file_cycle_problems(file_edges)
    problems += room_cycle_problems(modules, file_edges)
    problems += reexport_problems(modules)
    problems += std_lock_problems(modules)
    return problems


def test_layout_problems(src_dir):
    """`#[path]` attributes and `*_tests.rs` files anywhere under `src_dir`."""
    problems = []
    for directory, _, files in sorted(os.walk(src_dir)):
        for name in sorted(files):
            if not name.endswith(".rs"):
                continue
            file = os.path.join(directory, name)
            rel = os.path.relpath(file, src_dir)
            if name.endswith("_tests.rs"):
                problems.append(f"{rel}: a `*_tests.rs` file; tests go in the module's own tests.rs")
            with open(file, encoding="utf-8") as f:
                for line in scan(f.read()).path_attrs:
                    problems.append(f"{rel}:{line}: `#[path]` in src/; modules live where Rust looks")
    return problems
