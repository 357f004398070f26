"""What the backends' end-to-end files share: `clients`, an HTTP and a gRPC
tritonclient on the file's own `server` fixture, for the file's tests."""

import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient


@pytest.fixture(scope="module")
def clients(server):
    both = {"http": httpclient.InferenceServerClient(server.url),
            "grpc": grpcclient.InferenceServerClient(server.grpc_url)}
    yield both
    for c in both.values():
        c.close()
