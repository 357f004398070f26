"""Model repositories in Google Cloud Storage (`--model-repository=gs://bucket/path`)
from a real GCS server, fake-gcs-server: oxiserve serves an identity and a
Python model from it (the emulator named by either of Google's variables,
with or without a service account key), follows the bucket in poll mode,
keeps serving when the bucket goes away at run time, and fails to start,
with status 1 and a message naming the repository, when the bucket, the
path, the credentials file or the endpoint is wrong."""

import itertools
import json

import pytest
import tritonclient.http as httpclient

from gcs_helpers import FakeGcs
from helpers import wait_for
from models import identity
from python_models import write_repo
from remote_server import (
    RemoteServer, check_serves_both, infer_add_sub, infer_identity, model_config, run_oxiserve, start_fails, write_two_models,
)
from servers import TARGET, free_port

pytestmark = pytest.mark.skipif(
    TARGET != "oxiserve", reason="real Triton's GCS client is not pointed at emulators here"
)

_buckets = itertools.count()


@pytest.fixture(scope="module")
def gcs(tmp_path_factory):
    server = FakeGcs(tmp_path_factory.mktemp("gcs") / "fake-gcs-server.log")
    yield server
    server.stop()


@pytest.fixture
def bucket(gcs, tmp_path):
    """A new bucket holding `repo/` with an identity model and a Python model."""
    name = f"models-{next(_buckets)}"
    gcs.upload(name, write_two_models(tmp_path / "models"))
    return name


def service_account_key(path):
    """A service account key file, with a real RSA key, as Google issues them."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "test", "private_key_id": "1",
        "private_key": pem, "client_email": "oxiserve@test.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token",
    }))
    return path


def test_serves_from_the_emulator(gcs, bucket, tmp_path):
    with RemoteServer(gcs.url(bucket), tmp_path, env=gcs.env()) as server:
        check_serves_both(server)


def test_serves_with_a_service_account_key(gcs, bucket, tmp_path):
    """GOOGLE_APPLICATION_CREDENTIALS read and its tokens signed; the C++
    client's emulator variable (Triton's) names the emulator."""
    key = service_account_key(tmp_path / "key.json")
    env = gcs.env(STORAGE_EMULATOR_HOST=None, CLOUD_STORAGE_EMULATOR_ENDPOINT=gcs.endpoint,
                  GOOGLE_APPLICATION_CREDENTIALS=str(key))
    with RemoteServer(gcs.url(bucket), tmp_path, env=env) as server:
        client = httpclient.InferenceServerClient(server.url)
        infer_identity(client)
        client.close()


def test_poll_mode_follows_the_bucket(gcs, bucket, tmp_path):
    flags = ["--model-control-mode=poll", "--repository-poll-secs=1"]
    with RemoteServer(gcs.url(bucket), tmp_path, flags, env=gcs.env()) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert model_config(client, "ident")["max_batch_size"] == 8

        gcs.upload(bucket, write_repo(tmp_path / "added", [identity("added", "FP32", dims=[4])]))
        wait_for(lambda: client.is_model_ready("added"), what="the model added to the bucket")
        infer_identity(client, "added")

        key = "repo/ident/config.pbtxt"
        text = gcs.get(bucket, key).decode()
        gcs.put(bucket, key, text.replace("max_batch_size: 8", "max_batch_size: 4").encode())
        wait_for(lambda: model_config(client, "ident").get("max_batch_size") == 4,
                 what="the configuration changed in the bucket")
        infer_identity(client)

        gcs.delete(bucket, "repo/add_sub")
        wait_for(lambda: not client.is_model_ready("add_sub"),
                 what="the model deleted from the bucket to unload")
        assert client.is_model_ready("ident")
        client.close()


def test_a_bucket_gone_at_run_time_keeps_the_server_serving(gcs, bucket, tmp_path):
    """The poll names the repository and skips; every model serves on, the
    bucket's from the last copy."""
    local = write_repo(tmp_path / "local", [identity("local_ident", "FP32", dims=[4])])
    flags = ["--model-control-mode=poll", "--repository-poll-secs=1",
             f"--model-repository={local}"]
    with RemoteServer(gcs.url(bucket), tmp_path, flags, env=gcs.env()) as server:
        client = httpclient.InferenceServerClient(server.url)
        gcs.delete_bucket(bucket)
        wait_for(lambda: f"no bucket named {bucket}" in server.output(),
                 what="the poll to report the missing bucket")
        failed = [line for line in server.output().splitlines() if "no bucket named" in line]
        assert f"gs://{bucket}/repo" in failed[0], failed[0]
        infer_identity(client, "local_ident")
        infer_identity(client)
        infer_add_sub(client)
        assert client.is_server_ready()
        client.close()


@pytest.mark.parametrize("case, expected", [
    ("no bucket", ["gs://no-such-bucket/repo at http://127.0.0.1:",
                   "no bucket named no-such-bucket"]),
    ("no path", ["no model folders under gs://{bucket}/no/such/path",
                 "the GCS bucket '{bucket}' exists, check the path"]),
    ("missing key file", ["gs://{bucket}/repo: GOOGLE_APPLICATION_CREDENTIALS names "
                          "{tmp}/missing.json: No such file"]),
    ("not a key file", ["GOOGLE_APPLICATION_CREDENTIALS names {tmp}/key.json: "
                        "credentials of type \"external_account\" are not supported"]),
    ("closed port", ["GCS endpoint http://127.0.0.1:{closed} cannot be reached for "
                     "gs://{bucket}/repo", "Connection refused"]),
])
def test_start_up_errors_name_the_repository(gcs, bucket, tmp_path, case, expected):
    closed = free_port()
    url, env = gcs.url(bucket), gcs.env()
    if case == "no bucket":
        url = gcs.url("no-such-bucket")
    elif case == "no path":
        url = gcs.url(bucket, "no/such/path")
    elif case == "missing key file":
        env = gcs.env(GOOGLE_APPLICATION_CREDENTIALS=str(tmp_path / "missing.json"))
    elif case == "not a key file":
        (tmp_path / "key.json").write_text('{"type": "external_account"}')
        env = gcs.env(GOOGLE_APPLICATION_CREDENTIALS=str(tmp_path / "key.json"))
    elif case == "closed port":
        env = gcs.env(STORAGE_EMULATOR_HOST=f"http://127.0.0.1:{closed}")
    output = start_fails(url, env)
    for text in expected:
        assert text.format(bucket=bucket, closed=closed, tmp=tmp_path) in output, output


def test_a_missing_bucket_with_exit_on_error_false_is_not_ready(gcs, bucket, tmp_path):
    """As Triton: a repository that cannot be read at start-up leaves the
    server up but neither live nor ready, the local repository unserved."""
    local = write_repo(tmp_path / "local", [identity("local_ident", "FP32", dims=[4])])
    flags = ["--exit-on-error=false", f"--model-repository={local}"]
    with RemoteServer(gcs.url("no-such-bucket"), tmp_path, flags, env=gcs.env()) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert not client.is_server_ready()
        assert "gs://no-such-bucket/repo" in server.output()
        client.close()


def test_validate_reads_the_bucket(gcs, bucket):
    status, output = run_oxiserve(["validate", gcs.url(bucket)], gcs.env())
    assert status == 0, output
    assert "ok: ident (identity, version 1)" in output
    assert "ok: add_sub (python, version 1)" in output
