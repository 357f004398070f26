"""HTTPS, beyond Triton, with the flags shaped like gRPC's: --http-use-ssl,
--http-use-ssl-mutual, --http-server-cert, --http-server-key and
--http-root-cert, with stock `tritonclient.http` and certificates the tests
make; certificates rotate without a restart."""

import time

import numpy as np
import pytest
import tritonclient.http as httpclient

from models import identity, write_repository
from servers import TARGET, run_to_exit
from tls_certs import Authority, ssl_flags

pytestmark = pytest.mark.oxiserve_only


def https_client(server, root, identity_of=None):
    options = {"ca_certs": str(root)}
    if identity_of is not None:
        options |= {"certfile": str(identity_of / "client.pem"),
                    "keyfile": str(identity_of / "client.key")}
    return httpclient.InferenceServerClient(
        server.url, ssl=True, ssl_options=options, insecure=False, network_timeout=10
    )


def infers(client, model):
    tensor = httpclient.InferInput("INPUT0", [1, 3], "INT32")
    tensor.set_data_from_numpy(np.array([[1, 2, 3]], dtype=np.int32))
    return client.infer(model, [tensor]).as_numpy("OUTPUT0").tolist() == [[1, 2, 3]]


def refused(client):
    """Whether `client` gets no answer (TLS alert, reset, garbage to it)."""
    try:
        client.is_server_live()
    except Exception:  # noqa: BLE001 - any failure to get an answer
        return True
    return False


def test_https_client_infers_and_plain_http_is_refused(start_server, pki):
    server = start_server([identity("https_identity", "INT32")], *ssl_flags("http", pki))
    client = https_client(server, pki / "ca.pem")
    assert client.is_server_ready()
    assert infers(client, "https_identity")
    assert refused(httpclient.InferenceServerClient(server.url, network_timeout=5))
    assert infers(client, "https_identity"), "a plaintext client harmed nothing"
    assert "not supported" not in server.output()


def test_mutual_tls_needs_a_client_certificate_of_the_root(start_server, pki, tmp_path):
    server = start_server([identity("https_mutual", "INT32")], *ssl_flags("http", pki, mutual=True))
    assert infers(https_client(server, pki / "ca.pem", identity_of=pki), "https_mutual")
    assert refused(https_client(server, pki / "ca.pem"))
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    Authority("other CA").issue(stranger / "client.pem", stranger / "client.key", client=True)
    assert refused(https_client(server, pki / "ca.pem", identity_of=stranger))


def test_rotated_certificate_serves_new_connections(start_server, pki, tmp_path):
    server = start_server([identity("https_rotated", "INT32")], *ssl_flags("http", pki))
    assert infers(https_client(server, pki / "ca.pem"), "https_rotated")
    new_ca = Authority("rotated CA")
    new_root = new_ca.write(tmp_path / "new-ca.pem")
    new_ca.issue(pki / "server.pem", pki / "server.key", rsa_key=True, pkcs8=False)
    deadline = time.monotonic() + 15
    while refused(https_client(server, new_root)):
        assert time.monotonic() < deadline, "the new certificate was never served"
        time.sleep(0.2)
    assert refused(https_client(server, pki / "ca.pem"))


@pytest.mark.parametrize("flags, named", [
    (["--http-use-ssl=true"], "--http-server-cert"),
    (["--http-use-ssl=true", "--http-server-cert=/nonexistent/cert.pem",
      "--http-server-key=/nonexistent/key.pem"], "/nonexistent/cert.pem"),
    (["--http-use-ssl-mutual=true", "--http-server-cert=/c.pem", "--http-server-key=/k.pem"],
     "--http-root-cert"),
])
def test_bad_ssl_settings_stop_start_up(tmp_path, flags, named):
    repo = write_repository(tmp_path / "repo", [identity("https_bad", "INT32")], TARGET)
    status, output = run_to_exit(repo, flags)
    assert status not in (0, None), output
    assert named in output, output
    assert "Started HTTPService" not in output, output
