# syntax=docker/dockerfile:1
# oxiserve's CPU container images, in two targets:
#   docker build -t oxiserve .                     # `full` (the default): with a
#                                                  # Python (+ numpy) for the Python backend
#   docker build --target slim -t oxiserve:slim .  # without Python
# Both carry the release binary and ONNX Runtime's library, serve /models and
# listen on 8000 (HTTP), 8001 (gRPC) and 8002 (metrics), as Triton's images do:
#   docker run -p8000:8000 -p8001:8001 -p8002:8002 -v$PWD/models:/models oxiserve
# `tritonserver` is another name for the binary, so Triton's command lines
# (`... oxiserve tritonserver --model-repository=/models`) work unchanged.
# The sizes of the layers: scripts/image-size.py.

ARG ONNXRUNTIME_VERSION=1.31.1
ARG NUMPY_VERSION=1.26.4

# The project's own release build; the binary is stripped (its debug line
# tables are for local profiling). Python's headers let it compile the Python
# stub's C hot path (for the 3.11 of the `full` image and later).
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates crates
COPY backends backends
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    apt-get update \
    && apt-get install -y --no-install-recommends python3-dev \
    && cargo build --release --locked --bin oxiserve \
    && install -D --strip target/release/oxiserve /out/oxiserve

# Debian's Python 3.11: the interpreter of the `full` image, and the pip that
# fetches the wheels below.
FROM debian:bookworm-slim AS python
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*

# libonnxruntime.so from the same `onnxruntime` wheel the tests use
# (tests/requirements.txt); the binary loads it from its own folder.
FROM python AS onnxruntime
ARG ONNXRUNTIME_VERSION
RUN python3 -m venv /tmp/pip \
    && /tmp/pip/bin/pip download --no-deps --only-binary=:all: --dest /tmp/wheel \
        onnxruntime==${ONNXRUNTIME_VERSION} \
    && python3 -m zipfile -e /tmp/wheel/onnxruntime-*.whl /tmp/ort \
    && mkdir /out \
    && cp /tmp/ort/onnxruntime/capi/libonnxruntime*.so* /out/

# The Python models' environment: a venv with numpy where the binary looks
# first (<binary's folder>/python/bin/python3), pip removed once it is done.
FROM python AS python-env
ARG NUMPY_VERSION
RUN python3 -m venv /opt/oxiserve/python \
    && /opt/oxiserve/python/bin/pip install --no-cache-dir numpy==${NUMPY_VERSION} \
    && /opt/oxiserve/python/bin/pip uninstall -y pip setuptools

# oxiserve and ONNX Runtime, no Python: Python models are UNAVAILABLE, with
# that reason. tini reaps the Python backend's processes and passes signals on.
FROM debian:bookworm-slim AS slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 1000 --home-dir /nonexistent --shell /usr/sbin/nologin oxiserve
COPY --from=build /out/oxiserve /opt/oxiserve/oxiserve
COPY --from=onnxruntime /out/ /opt/oxiserve/
RUN ln -s /opt/oxiserve/oxiserve /usr/local/bin/oxiserve \
    && ln -s /opt/oxiserve/oxiserve /usr/local/bin/tritonserver
USER 1000
EXPOSE 8000 8001 8002
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["oxiserve", "--model-repository=/models"]

# The default image: `slim` plus Debian's python3 and the numpy venv.
FROM slim AS full
USER root
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=python-env /opt/oxiserve/python /opt/oxiserve/python
USER 1000
