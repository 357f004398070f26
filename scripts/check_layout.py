#!/usr/bin/env python3
"""Checks the workspace against the layout docs/ARCHITECTURE.md describes.
Exits 1 and says what is wrong, one `layout: ..` line per problem.

1. Crates depend one way (types <- proto <- config <- backend <- core <- {http,
   grpc} <- server), backend crates see only types, proto, config and backend,
   and the core and everything below it name no HTTP or gRPC framework.

2. Imports run one way inside every crate (issue 31). Per crate target (lib.rs,
   main.rs) a graph is built whose nodes are the source files: `foo.rs` or
   `foo/mod.rs` is the module `foo`, an inline `mod x { .. }` belongs to its
   file. There is an edge A -> B when A names an item of module B through a
   `use crate::..`, `use super::..`, `use self::..` path (or a `use child::..`
   of a child module, relative as in Rust 2018), or through a `crate::x::y`,
   `super::x`, `self::x` or `child::x` path in code. A path resolves to the
   deepest module on it that is a file (`crate::a::b::C` -> a/b.rs if it exists,
   else a.rs). A parent's `mod child;` is no edge; a child naming its ancestor's
   items is an edge child -> ancestor. A re-export (`pub use`, any visibility)
   is wiring: it is an edge only when the module's own code names the item
   too, and a path through a re-export leads on to the module that defines
   the item. What must hold:
   - no cycle among the files;
   - no cycle among the rooms at any level: the rooms of a module are its child
     modules, a room being the child's file and every file under it; room R
     -> room S when a file of R has an edge to a file of S. (Cycles whose rooms
     are all single files are file cycles, reported as such.)
   - no code of the crate names an item the crate root re-exports from a
     submodule (`pub use`) through the root (`crate::Name`): it names the
     defining module (`crate::x::Name`).
   Test code is left out of these three: a `tests.rs`, anything under a
   `tests/` folder, a file declared `#[cfg(test)] mod x;`, and any item under
   `#[cfg(test)]` (`mod tests { .. }` included). Comments (doc links included)
   and literals are not code. A cycle prints as
   `layout: crate X: a.rs -> b.rs -> a.rs (names: a.rs -> b.rs: Item; ..)`.

3. One layout for Rust unit tests: inline (`#[cfg(test)] mod tests { .. }`) or,
   when long, in the module's own child file `foo/tests.rs` (or `foo/tests/`,
   helpers under it) declared by `#[cfg(test)] mod tests;` in `foo.rs` or
   `foo/mod.rs`. In src/: no `#[path = ".."]`, no `*_tests.rs` file, no other
   `#[cfg(test)] mod x;` file. (Integration tests, `<crate>/tests/`, may share
   support files with `#[path]`.)

4. The Python stub package (backends/python/python/oxiserve_stub) has no import
   cycle: nodes are its modules (`__init__.py` is the package), an edge A -> B
   for every `import`/`from .. import` (or `importlib.import_module`/`__import__`
   of a constant name) in A, wherever it is (module level or in a function),
   that names module B or an item of it, resolved to the deepest module it
   names (`from . import x` -> x.py when it exists).

5. Locks are parking_lot's: non-test code names no `std::sync` Mutex, RwLock
   or Condvar (they poison on a panic, and the code recovered from that in
   some places and panicked in others; parking_lot's never poison).
"""

import json
import os
import subprocess
import sys

from layout_python import check_package
from layout_rust import check_target, test_layout_problems

# The Python stub package, checked for import cycles (rule 4).
PYTHON_PACKAGE = "backends/python/python/oxiserve_stub"

# Workspace crate -> the workspace crates it may depend on.
ALLOWED = {
    "oxiserve-types": set(),
    "oxiserve-proto": {"oxiserve-types"},
    "oxiserve-config": {"oxiserve-types", "oxiserve-proto"},
    "oxiserve-backend": {"oxiserve-types", "oxiserve-proto", "oxiserve-config", "oxiserve-trace"},
    "oxiserve-core": {
        "oxiserve-types", "oxiserve-proto", "oxiserve-config", "oxiserve-backend", "oxiserve-trace",
    },
}
# Request tracing (settings, sampling, trace files, OpenTelemetry export): the
# vocabulary only; the core reports to it and the frontends start traces.
ALLOWED["oxiserve-trace"] = {"oxiserve-types"}
# TLS for the frontends' listeners (certificate files, handshakes): no other
# workspace crate, no protocol framework; the frontends use it.
ALLOWED["oxiserve-tls"] = set()
ALLOWED["oxiserve-http"] = ALLOWED["oxiserve-core"] | {"oxiserve-core", "oxiserve-tls"}
ALLOWED["oxiserve-grpc"] = ALLOWED["oxiserve-core"] | {"oxiserve-core", "oxiserve-tls"}
# Remote repositories (S3, GCS, Azure): the core's RepositorySync, no frontend.
ALLOWED["oxiserve-s3"] = ALLOWED["oxiserve-core"] | {"oxiserve-core"}
# The Redis response cache: a store behind the core's CacheStore trait, wired
# by the server, so the core never links a Redis client.
ALLOWED["oxiserve-redis-cache"] = {"oxiserve-core"}
# The client library: the vocabulary and the messages, nothing of the server.
ALLOWED["oxiserve-client"] = {"oxiserve-types", "oxiserve-proto"}
# The load generator is a client: it shares the vocabulary, the messages and the
# configuration's JSON form (analyze turns ModelConfig into the JSON that Triton's
# repository API takes as a config override), and makes its calls other than the
# load's requests with oxiserve-client; nothing of the server.
ALLOWED["oxiserve-perf"] = {
    "oxiserve-types", "oxiserve-proto", "oxiserve-config", "oxiserve-client",
    "oxiserve-workspace-hack",
}
# No code, no workspace crate: dependency features shared by the wheel's build.
ALLOWED["oxiserve-workspace-hack"] = set()
# A backend built as a shared library of Triton's C API (a plugin the server
# opens when one of its models loads) sees what a backend sees.
ALLOWED["oxiserve-backend-library"] = ALLOWED["oxiserve-backend"] | {"oxiserve-backend"}
# Backends (backends/*) see the contract only.
BACKEND_ALLOWED = ALLOWED["oxiserve-backend"] | {"oxiserve-backend", "oxiserve-backend-library"}
# Crates that must stay free of protocol frameworks.
PROTOCOL_FREE = {
    "oxiserve-types", "oxiserve-proto", "oxiserve-config", "oxiserve-backend", "oxiserve-core",
    "oxiserve-tls", "oxiserve-trace", "oxiserve-redis-cache",
}
FRAMEWORKS = {"axum", "hyper", "tonic", "tower-http"}
# oxiserve-proto may hold the generated gRPC service code behind this
# optional feature (off by default); only the frontends may turn it on.
PROTO_GRPC_FEATURE = "grpc"


def _feature_only(package, dep):
    """Whether `dep` is optional and only the non-default gRPC feature enables it."""
    optional = all(d.get("optional") for d in package["dependencies"] if d["name"] == dep)
    features = package.get("features", {})
    default_on = any(
        f in (dep, f"dep:{dep}", PROTO_GRPC_FEATURE) for f in features.get("default", [])
    )
    return optional and not default_on


def dependency_problems(members):
    """Rule 1: the workspace crates' dependencies."""
    problems = []
    for name, package in sorted(members.items()):
        deps = {d["name"] for d in package["dependencies"] if d.get("kind") in (None, "build")}
        internal = deps & set(members)
        if "/backends/" in package["manifest_path"]:
            allowed = BACKEND_ALLOWED
        else:
            allowed = ALLOWED.get(name)
        if allowed is not None:
            for dep in sorted(internal - allowed):
                problems.append(f"{name} must not depend on {dep} (docs/ARCHITECTURE.md: dependencies run one way)")
        if name in PROTOCOL_FREE:
            for dep in sorted(deps & FRAMEWORKS):
                if name == "oxiserve-proto" and _feature_only(package, dep):
                    continue
                problems.append(f"{name} must not depend on {dep}: the core knows no protocol")
            for d in package["dependencies"]:
                if d["name"] == "oxiserve-proto" and PROTO_GRPC_FEATURE in d.get("features", []):
                    problems.append(
                        f"{name} must not enable oxiserve-proto's '{PROTO_GRPC_FEATURE}' feature"
                    )
    return problems


def module_problems(package):
    """Rules 2 and 3 for one crate: its lib and bin targets' module graphs and
    its src/ folder's test layout."""
    problems, src_dirs = [], set()
    for target in package["targets"]:
        if not {"lib", "bin", "proc-macro"} & set(target["kind"]):
            continue
        src_dirs.add(os.path.dirname(target["src_path"]))
        problems += check_target(target["src_path"])
    for src_dir in sorted(src_dirs):
        problems += test_layout_problems(src_dir)
    return [f"crate {package['name']}: {problem}" for problem in dict.fromkeys(problems)]


def main() -> int:
    meta = json.loads(
        subprocess.check_output(["cargo", "metadata", "--format-version", "1", "--no-deps"])
    )
    members = {p["name"]: p for p in meta["packages"]}
    problems = dependency_problems(members)
    for _, package in sorted(members.items()):
        problems.extend(module_problems(package))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    package_dir = os.path.join(root, PYTHON_PACKAGE)
    for problem in check_package(package_dir):
        problems.append(f"python {os.path.basename(package_dir)}: {problem}")
    for problem in problems:
        print(f"layout: {problem}")
    if not problems:
        print(
            f"layout: {len(members)} crates follow the dependency direction of docs/ARCHITECTURE.md, "
            "import one way and lay out their tests alike"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
