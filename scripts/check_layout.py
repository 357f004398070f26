#!/usr/bin/env python3
"""Checks the workspace against DESIGN.md's layout: crates depend one way
(types <- proto <- config <- backend <- core <- {http, grpc} <- server), backend
crates see only types, proto, config and backend, and the core and everything
below it name no HTTP or gRPC framework. Exits 1 and says what is wrong."""

import json
import subprocess
import sys

# Workspace crate -> the workspace crates it may depend on.
ALLOWED = {
    "oxiserve-types": set(),
    "oxiserve-proto": {"oxiserve-types"},
    "oxiserve-config": {"oxiserve-types", "oxiserve-proto"},
    "oxiserve-backend": {"oxiserve-types", "oxiserve-proto", "oxiserve-config"},
    "oxiserve-core": {"oxiserve-types", "oxiserve-proto", "oxiserve-config", "oxiserve-backend"},
}
# TLS for the frontends' listeners (certificate files, handshakes): no other
# workspace crate, no protocol framework; the frontends use it.
ALLOWED["oxiserve-tls"] = set()
ALLOWED["oxiserve-http"] = ALLOWED["oxiserve-core"] | {"oxiserve-core", "oxiserve-tls"}
ALLOWED["oxiserve-grpc"] = ALLOWED["oxiserve-core"] | {"oxiserve-core", "oxiserve-tls"}
# S3 repositories: the core's RepositorySync, no frontend.
ALLOWED["oxiserve-s3"] = ALLOWED["oxiserve-core"] | {"oxiserve-core"}
# The load generator is a client: it shares the vocabulary, the messages and the
# configuration's JSON form (analyze over gRPC turns ModelConfig into the JSON that
# Triton's repository API takes as a config override), nothing of the server.
ALLOWED["oxiserve-perf"] = {"oxiserve-types", "oxiserve-proto", "oxiserve-config"}
# Backends (backends/*) see the contract only.
BACKEND_ALLOWED = ALLOWED["oxiserve-backend"] | {"oxiserve-backend"}
# Crates that must stay free of protocol frameworks.
PROTOCOL_FREE = {
    "oxiserve-types", "oxiserve-proto", "oxiserve-config", "oxiserve-backend", "oxiserve-core",
    "oxiserve-tls",
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


def main() -> int:
    meta = json.loads(
        subprocess.check_output(["cargo", "metadata", "--format-version", "1", "--no-deps"])
    )
    members = {p["name"]: p for p in meta["packages"]}
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
                problems.append(f"{name} must not depend on {dep} (DESIGN.md rule 1)")
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
    for problem in problems:
        print(f"layout: {problem}")
    if not problems:
        print(f"layout: {len(members)} crates follow DESIGN.md's dependency direction")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
