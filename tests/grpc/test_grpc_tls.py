"""gRPC over TLS with stock `tritonclient.grpc`: --grpc-use-ssl,
--grpc-use-ssl-mutual, --grpc-server-cert, --grpc-server-key and
--grpc-root-cert, with certificates the tests make."""

import time

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from grpc_helpers import infer_input
from models import identity, write_repository
from servers import TARGET, run_to_exit
from tls_certs import Authority, ssl_flags


def tls_client(server, root, identity_of=None):
    """A client of `server` over TLS trusting the CA file `root`, presenting the
    client certificate in `identity_of` (a folder with client.pem/client.key)."""
    chain = key = None
    if identity_of is not None:
        chain, key = str(identity_of / "client.pem"), str(identity_of / "client.key")
    return grpcclient.InferenceServerClient(
        server.grpc_url, ssl=True, root_certificates=str(root), private_key=key, certificate_chain=chain
    )


def assert_infers(client, model):
    array = np.array([[1, 2, 3]], dtype=np.int32)
    result = client.infer(model, [infer_input("INPUT0", array, "INT32")], client_timeout=10)
    assert result.as_numpy("OUTPUT0").tolist() == [[1, 2, 3]]


def assert_refused(client):
    with pytest.raises(InferenceServerException) as info:
        client.is_server_live(client_timeout=10)
    assert info.value.status() in ("StatusCode.UNAVAILABLE", "StatusCode.DEADLINE_EXCEEDED"), info.value


def test_ssl_client_infers(start_server, pki):
    server = start_server([identity("tls_identity", "INT32")], *ssl_flags("grpc", pki))
    with tls_client(server, pki / "ca.pem") as client:
        assert client.is_server_ready()
        assert_infers(client, "tls_identity")
    if TARGET == "oxiserve":
        assert "not supported" not in server.output()


def test_plaintext_client_is_refused(start_server, pki):
    server = start_server([identity("tls_plain", "INT32")], *ssl_flags("grpc", pki))
    with grpcclient.InferenceServerClient(server.grpc_url) as plain:
        assert_refused(plain)
    # The failed connection harmed nothing.
    with tls_client(server, pki / "ca.pem") as client:
        assert_infers(client, "tls_plain")


def test_client_trusting_another_ca_is_refused(start_server, pki, tmp_path):
    server = start_server([identity("tls_stranger", "INT32")], *ssl_flags("grpc", pki))
    with tls_client(server, Authority("other CA").write(tmp_path / "other.pem")) as client:
        assert_refused(client)


def test_mutual_tls(start_server, pki):
    """--grpc-use-ssl-mutual implies --grpc-use-ssl; clients need a
    certificate of the root CA."""
    server = start_server([identity("tls_mutual", "INT32")], *ssl_flags("grpc", pki, mutual=True))
    with tls_client(server, pki / "ca.pem", identity_of=pki) as client:
        assert_infers(client, "tls_mutual")
    with tls_client(server, pki / "ca.pem") as anonymous:
        assert_refused(anonymous)


def test_mutual_tls_refuses_a_client_certificate_of_another_ca(start_server, pki, tmp_path):
    server = start_server([identity("tls_foreign", "INT32")], *ssl_flags("grpc", pki, mutual=True))
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    Authority("other CA").issue(stranger / "client.pem", stranger / "client.key", client=True)
    with tls_client(server, pki / "ca.pem", identity_of=stranger) as client:
        assert_refused(client)


@pytest.mark.oxiserve_only
def test_rotated_certificate_serves_new_connections(start_server, pki, tmp_path):
    """cert-manager rewrites the files in place; new connections get the new
    certificate without a restart (Triton reads them once, at start-up)."""
    server = start_server([identity("tls_rotated", "INT32")], *ssl_flags("grpc", pki))
    with tls_client(server, pki / "ca.pem") as client:
        assert_infers(client, "tls_rotated")
    new_ca = Authority("rotated CA")
    new_root = new_ca.write(tmp_path / "new-ca.pem")
    # An RSA key in the traditional form, as cert-manager writes by default.
    new_ca.issue(pki / "server.pem", pki / "server.key", rsa_key=True, pkcs8=False)
    deadline = time.monotonic() + 15
    while True:
        with tls_client(server, new_root) as client:
            try:
                assert_infers(client, "tls_rotated")
                break
            except InferenceServerException:
                if time.monotonic() > deadline:
                    raise
        time.sleep(0.2)
    with tls_client(server, pki / "ca.pem") as old:
        assert_refused(old)


@pytest.mark.oxiserve_only
@pytest.mark.parametrize("problem", ["missing", "no certificate", "key of another certificate"])
def test_bad_certificate_files_stop_start_up(tmp_path, pki, problem):
    """The server exits at start-up, and its log names the file at fault."""
    flags = ssl_flags("grpc", pki)
    named = pki / "server.pem"
    if problem == "missing":
        named = pki / "absent.pem"
        flags[0] = f"--grpc-server-cert={named}"
    elif problem == "no certificate":
        named.write_text("not a certificate\n")
    else:
        named = pki / "server.key"
        Authority("other CA").issue(tmp_path / "other.pem", named)
    repo = write_repository(tmp_path / "repo", [identity("tls_bad", "INT32")], TARGET)
    status, output = run_to_exit(repo, flags)
    assert status not in (0, None), output
    assert str(named) in output, output
    assert "Started GRPCInferenceService" not in output, output


@pytest.mark.oxiserve_only
@pytest.mark.parametrize(
    "flags, missing",
    [
        (["--grpc-use-ssl=true"], "--grpc-server-cert"),
        (["--grpc-use-ssl=true", "--grpc-server-cert=/tmp/cert.pem"], "--grpc-server-key"),
        (
            ["--grpc-use-ssl-mutual=true", "--grpc-server-cert=/c.pem", "--grpc-server-key=/k.pem"],
            "--grpc-root-cert",
        ),
    ],
)
def test_missing_ssl_flags_stop_start_up(tmp_path, flags, missing):
    repo = write_repository(tmp_path / "repo", [identity("tls_flags", "INT32")], TARGET)
    status, output = run_to_exit(repo, flags)
    assert status not in (0, None), output
    assert f"needs {missing}" in output, output
