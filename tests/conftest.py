"""Shared fixtures: the session's main server, clients, and short-lived servers.

Run against real Triton with `OXI_TARGET=triton`; the default is oxiserve.

The tests live in feature folders (http/, grpc/, python_backend/, ...); the
modules they share (servers.py, models.py, helpers.py, ...) are in support/,
put on sys.path here so that every test imports them by their plain names.
"""

import sys
from pathlib import Path

# Before the imports below: they are support modules too.
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from catalog import main_models
from helpers import Http
from models import write_repository
from servers import TARGET, Server
from tls_certs import Authority


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "oxiserve_only: behaviour real Triton does not have (skipped there)"
    )


def pytest_report_header(config):
    return f"server under test: {TARGET} (OXI_TARGET)"


def pytest_collection_modifyitems(config, items):
    if TARGET != "triton":
        return
    skip = pytest.mark.skip(reason="oxiserve-only behaviour")
    for item in items:
        if "oxiserve_only" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def target():
    return TARGET


@pytest.fixture(scope="session")
def main_server(tmp_path_factory):
    """One server for the whole session, serving `catalog.main_models()`."""
    repo = write_repository(tmp_path_factory.mktemp("main_repo"), main_models(), TARGET)
    with Server(repo) as server:
        yield server


@pytest.fixture(scope="session")
def client(main_server):
    c = httpclient.InferenceServerClient(main_server.url)
    yield c
    c.close()


@pytest.fixture(scope="session")
def grpc_client(main_server):
    """A `tritonclient.grpc` client of the main server."""
    c = grpcclient.InferenceServerClient(main_server.grpc_url)
    yield c
    c.close()


@pytest.fixture(scope="session")
def http(main_server):
    """Raw HTTP to the main server (`requests`)."""
    with Http(main_server.url) as h:
        yield h


@pytest.fixture
def start_server(tmp_path):
    """Starts a server on a fresh repository: start_server(specs, *flags)."""
    started = []

    def start(specs, *flags):
        repo = write_repository(tmp_path / f"repo{len(started)}", specs, TARGET)
        server = Server(repo, flags)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def pki(tmp_path):
    """A CA (ca.pem), a server certificate of it (server.pem, server.key) and a
    client certificate of it (client.pem, client.key), in `tmp_path`."""
    ca = Authority("test CA")
    ca.write(tmp_path / "ca.pem")
    ca.issue(tmp_path / "server.pem", tmp_path / "server.key")
    ca.issue(tmp_path / "client.pem", tmp_path / "client.key", client=True, pkcs8=False)
    return tmp_path
