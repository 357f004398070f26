"""The --grpc-* flags oxiserve honours: address/port, SO_REUSEPORT,
keepalive, connection age, and --allow-grpc=false."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from grpc_helpers import expect_grpc_error, infer_input
from models import identity, write_repository
from servers import TARGET, run_to_exit

HEADER = "triton-grpc-protocol-admin-key"

FLAGS = [
    "--reuse-grpc-port=true",
    "--grpc-keepalive-time=10000",
    "--grpc-keepalive-timeout=5000",
    "--grpc-max-connection-age=60000",
    "--grpc-max-connection-age-grace=5000",
]


def test_connection_flags(start_server):
    server = start_server([identity("flagged", "INT32")], *FLAGS)
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        array = np.array([[7, 8]], dtype=np.int32)
        result = client.infer("flagged", [infer_input("INPUT0", array, "INT32")])
        assert result.as_numpy("OUTPUT0").tolist() == [[7, 8]]
    if TARGET == "oxiserve":
        out = server.output()
        for flag in FLAGS:
            name = flag.split("=")[0]
            assert f"{name}: not supported" not in out and f"{name}: no effect" not in out, out


def test_grpc_can_be_turned_off(start_server):
    server = start_server([identity("no_grpc", "INT32")], "--allow-grpc=false")
    assert server.grpc_url is None
    assert "Started GRPCInferenceService" not in server.output()


def test_restricted_protocol(start_server):
    """Triton's header is the flag's key after `triton-grpc-protocol-`."""
    server = start_server(
        [identity("guarded", "INT32")],
        "--grpc-restricted-protocol=model-repository,statistics:admin-key=secret",
    )
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        for call in (client.get_model_repository_index, client.get_inference_statistics):
            expect_grpc_error(
                call, "UNAVAILABLE", "This protocol is restricted, expecting header 'triton-grpc-protocol-admin-key'"
            )
            expect_grpc_error(
                lambda: call(headers={HEADER: "wrong"}), "UNAVAILABLE", "restricted"
            )
            assert call(headers={HEADER: "secret"})
        # Other APIs are open.
        assert client.is_server_live()
        assert client.get_model_metadata("guarded").name == "guarded"


@pytest.mark.parametrize("flags, message", [
    (["--grpc-restricted-protocol=nope:k=v"], "unknown restricted protocol 'nope'"),
    (["--grpc-restricted-protocol=health:k=v", "--grpc-restricted-protocol=trace,health:k=w"],
     "restricted protocol 'health' can not be specified in multiple config groups"),
    (["--http-restricted-api=everything:k=v"], "unknown restricted api 'everything'"),
])
def test_bad_restrictions_stop_start_up(tmp_path, flags, message):
    repo = write_repository(tmp_path / "repo", [identity("guarded", "INT32")], TARGET)
    status, output = run_to_exit(repo, flags)
    assert status not in (0, None), output
    assert message in output, output


@pytest.mark.oxiserve_only
def test_messages_over_the_input_size_limit_are_refused(start_server):
    """--grpc-max-input-size caps request messages (Triton takes 2 GiB)."""
    server = start_server([identity("capped", "INT32")], "--grpc-max-input-size=1048576")
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        big = np.zeros((1, 300_000), dtype=np.int32)  # 1.2 MB of raw contents
        expect_grpc_error(
            lambda: client.infer("capped", [infer_input("INPUT0", big, "INT32")]),
            "OUT_OF_RANGE",
            "decoded message length too large: found 1200035 bytes, the limit is: 1048576",
        )
        small = np.zeros((1, 200_000), dtype=np.int32)
        result = client.infer("capped", [infer_input("INPUT0", small, "INT32")])
        assert result.as_numpy("OUTPUT0").shape == (1, 200_000)
