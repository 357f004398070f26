"""Model repositories in S3 (`--model-repository=s3://host:port/bucket/path`)
from a real S3 server, moto's, that checks credentials: oxiserve serves an
identity and a Python model from it with keys from the environment or from
a credentials file, over HTTP or HTTPS, follows the bucket in poll mode (added, changed, deleted
models), loads a model uploaded after start in explicit mode, and fails to
start, with status 1 and a message that names the wrong part, when the
endpoint, the bucket, the credentials or the path is wrong."""

import itertools

import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import wait_for
from models import identity
from python_models import write_repo
from remote_server import (
    RemoteServer, check_serves_both, infer_identity, model_config, run_oxiserve, start_fails, write_two_models,
)
from s3_helpers import Moto, certificates
from servers import TARGET, free_port

oxiserve_only = pytest.mark.skipif(TARGET != "oxiserve", reason="oxiserve's own messages")

_buckets = itertools.count()


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    server = Moto(tmp_path_factory.mktemp("moto") / "moto.log")
    yield server
    server.stop()


@pytest.fixture
def bucket(moto, tmp_path):
    """A new bucket holding `repo/` with an identity model and a Python model."""
    name = f"models-{next(_buckets)}"
    moto.upload(name, write_two_models(tmp_path / "models"))
    return name


def test_serves_with_keys_from_the_environment(moto, bucket, tmp_path):
    with RemoteServer(moto.url(bucket), tmp_path, env=moto.env()) as server:
        check_serves_both(server)


def test_serves_with_a_credentials_file(moto, bucket, tmp_path):
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[ci]\naws_access_key_id = {moto.key_id}\naws_secret_access_key = {moto.secret}\n"
    )
    env = moto.env(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None, AWS_PROFILE="ci",
                   AWS_SHARED_CREDENTIALS_FILE=str(credentials))
    with RemoteServer(moto.url(bucket), tmp_path, env=env) as server:
        client = httpclient.InferenceServerClient(server.url)
        infer_identity(client)
        client.close()


def test_https_endpoint(tmp_path):
    """`s3://https://host:port/...`: TLS checked against the trusted
    certificates (SSL_CERT_FILE here); an untrusted one is refused."""
    tls = certificates(tmp_path)
    moto = Moto(tmp_path / "moto.log", tls=tls)
    try:
        moto.upload("secure", write_repo(tmp_path / "models", [identity("ident", "FP32",
                                                                        dims=[4])]))
        trusted = moto.env(SSL_CERT_FILE=str(tls[0]))
        with RemoteServer(moto.url("secure"), tmp_path, env=trusted) as server:
            client = httpclient.InferenceServerClient(server.url)
            infer_identity(client)
            client.close()
        if TARGET == "oxiserve":
            output = start_fails(moto.url("secure"), moto.env())
            assert f"S3 endpoint {moto.endpoint} cannot be reached" in output, output
            assert "certificate" in output, output
    finally:
        moto.stop()


def test_poll_mode_follows_the_bucket(moto, bucket, tmp_path):
    flags = ["--model-control-mode=poll", "--repository-poll-secs=1"]
    with RemoteServer(moto.url(bucket), tmp_path, flags, env=moto.env()) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert model_config(client, "ident")["max_batch_size"] == 8

        moto.upload(bucket, write_repo(tmp_path / "added", [identity("added", "FP32", dims=[4])]))
        wait_for(lambda: client.is_model_ready("added"), what="the model added to the bucket")
        infer_identity(client, "added")

        key = "repo/ident/config.pbtxt"
        text = moto.s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
        moto.s3.put_object(Bucket=bucket, Key=key,
                           Body=text.replace("max_batch_size: 8", "max_batch_size: 4"))
        wait_for(lambda: model_config(client, "ident").get("max_batch_size") == 4,
                 what="the configuration changed in the bucket")
        infer_identity(client)

        moto.delete(bucket, "repo/add_sub")
        wait_for(lambda: not client.is_model_ready("add_sub"),
                 what="the model deleted from the bucket to unload")
        assert client.is_model_ready("ident")
        client.close()


def test_explicit_mode_loads_a_model_uploaded_after_start(moto, bucket, tmp_path):
    flags = ["--model-control-mode=explicit"]
    with RemoteServer(moto.url(bucket), tmp_path, flags, env=moto.env()) as server:
        client = httpclient.InferenceServerClient(server.url)
        with pytest.raises(InferenceServerException, match="late"):
            client.load_model("late")
        moto.upload(bucket, write_repo(tmp_path / "late", [identity("late", "FP32", dims=[4])]))
        client.load_model("late")
        infer_identity(client, "late")
        client.close()


# Each wrong part's message, one per part.
PARTS = {
    "endpoint": "S3 endpoint http://127.0.0.1:{closed} cannot be reached",
    "bucket": "S3 bucket 'no-such-bucket' does not exist",
    "path": "no model folders under s3://{bucket}/no/such/path",
    "missing credentials": "no AWS credentials: looked at AWS_ACCESS_KEY_ID",
    "rejected credentials": "rejected the credentials from AWS_ACCESS_KEY_ID",
}


@oxiserve_only
@pytest.mark.parametrize("case, part, details", [
    ("closed port", "endpoint", ["Connection refused"]),
    ("no bucket", "bucket", ["NoSuchBucket"]),
    ("no path", "path", []),
    ("no keys", "missing credentials", ["/nonexistent/credentials (no such file)",
                                        "/nonexistent/config (no such file)"]),
    ("unknown key", "rejected credentials", ["InvalidAccessKeyId"]),
    ("wrong secret", "rejected credentials", ["SignatureDoesNotMatch"]),
    ("no permission", "rejected credentials", ["AccessDenied"]),
])
def test_start_up_errors_name_the_wrong_part(moto, bucket, case, part, details):
    closed = free_port()
    url, env = moto.url(bucket), moto.env()
    if case == "closed port":
        url = f"s3://127.0.0.1:{closed}/{bucket}/repo"
    elif case == "no bucket":
        url = moto.url("no-such-bucket")
    elif case == "no path":
        url = moto.url(bucket, "no/such/path")
    elif case == "no keys":
        env = moto.env(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None)
    elif case == "unknown key":
        env = moto.env(AWS_ACCESS_KEY_ID="AKIAUNKNOWNKEY000000")
    elif case == "wrong secret":
        env = moto.env(AWS_SECRET_ACCESS_KEY="not-the-secret")
    elif case == "no permission":
        env = moto.env(**moto.denied_key)
    output = start_fails(url, env)
    messages = {p: m.format(closed=closed, bucket=bucket) for p, m in PARTS.items()}
    named = [p for p, message in messages.items() if message in output]
    assert named == [part], output
    for detail in details:
        assert detail in output, output


@oxiserve_only
def test_validate_reads_the_bucket(moto, bucket):
    status, output = run_oxiserve(["validate", moto.url(bucket)], moto.env())
    assert status == 0, output
    assert "ok: ident (identity, version 1)" in output
    assert "ok: add_sub (python, version 1)" in output
