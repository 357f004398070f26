"""Model repositories in Azure Blob Storage
(`--model-repository=as://account/container/path`) from a real Azure Storage
server, Azurite, that checks Shared Key signatures: oxiserve serves an
identity and a Python model from it (credentials from a connection string,
or Triton's AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY), follows the
container in poll mode, keeps serving when the container goes away at run
time, and fails to start, with status 1 and a message naming the repository
and the wrong part, when the container, the path, the key or the endpoint is
wrong."""

import itertools

import pytest
import tritonclient.http as httpclient

from azure_helpers import ACCOUNT, KEY, Azurite
from helpers import wait_for
from models import identity
from python_models import write_repo
from remote_server import (
    RemoteServer, check_serves_both, infer_add_sub, infer_identity, model_config, run_oxiserve, start_fails, write_two_models,
)
from servers import TARGET, free_port

pytestmark = pytest.mark.skipif(
    TARGET != "oxiserve", reason="real Triton reaches Azure's own endpoints only"
)

_containers = itertools.count()
# Another valid key (base64), not the account's.
WRONG_KEY = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ=="


@pytest.fixture(scope="module")
def azurite(tmp_path_factory):
    server = Azurite(tmp_path_factory.mktemp("azurite") / "azurite.log")
    yield server
    server.stop()


@pytest.fixture
def container(azurite, tmp_path):
    """A new container holding `repo/` with an identity model and a Python model."""
    name = f"models-{next(_containers)}"
    azurite.upload(name, write_two_models(tmp_path / "models"))
    return name


def test_serves_with_a_connection_string(azurite, container, tmp_path):
    with RemoteServer(azurite.url(container), tmp_path, env=azurite.env()) as server:
        check_serves_both(server)


def test_serves_with_tritons_account_and_key(azurite, container, tmp_path):
    """AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY, as Triton reads them; the
    connection string only names the emulator's endpoint, and the account
    variable wins over the path's."""
    env = azurite.env(AZURE_STORAGE_CONNECTION_STRING=azurite.connection_string(key=None),
                      AZURE_STORAGE_ACCOUNT=ACCOUNT, AZURE_STORAGE_KEY=KEY)
    url = f"as://another.blob.core.windows.net/{container}/repo"
    with RemoteServer(url, tmp_path, env=env) as server:
        client = httpclient.InferenceServerClient(server.url)
        infer_identity(client)
        client.close()


def test_poll_mode_follows_the_container(azurite, container, tmp_path):
    flags = ["--model-control-mode=poll", "--repository-poll-secs=1"]
    with RemoteServer(azurite.url(container), tmp_path, flags, env=azurite.env()) as server:
        client = httpclient.InferenceServerClient(server.url)
        assert model_config(client, "ident")["max_batch_size"] == 8

        azurite.upload(container, write_repo(tmp_path / "added",
                                             [identity("added", "FP32", dims=[4])]))
        wait_for(lambda: client.is_model_ready("added"), what="the model added to the container")
        infer_identity(client, "added")

        key = "repo/ident/config.pbtxt"
        text = azurite.get(container, key).decode()
        azurite.put(container, key, text.replace("max_batch_size: 8", "max_batch_size: 4"))
        wait_for(lambda: model_config(client, "ident").get("max_batch_size") == 4,
                 what="the configuration changed in the container")
        infer_identity(client)

        azurite.delete(container, "repo/add_sub")
        wait_for(lambda: not client.is_model_ready("add_sub"),
                 what="the model deleted from the container to unload")
        assert client.is_model_ready("ident")
        client.close()


def test_a_container_gone_at_run_time_keeps_the_server_serving(azurite, container, tmp_path):
    """The poll names the container and skips; every model serves on, the
    container's from the last copy."""
    local = write_repo(tmp_path / "local", [identity("local_ident", "FP32", dims=[4])])
    flags = ["--model-control-mode=poll", "--repository-poll-secs=1",
             f"--model-repository={local}"]
    with RemoteServer(azurite.url(container), tmp_path, flags, env=azurite.env()) as server:
        client = httpclient.InferenceServerClient(server.url)
        azurite.delete_container(container)
        missing = f"Azure container '{container}' does not exist"
        wait_for(lambda: missing in server.output(), what="the poll to report the container")
        infer_identity(client, "local_ident")
        infer_identity(client)
        infer_add_sub(client)
        assert client.is_server_ready()
        client.close()


@pytest.mark.parametrize("case, expected", [
    ("no container", ["Azure container 'no-such-container' does not exist at "
                      "http://127.0.0.1:{port}/devstoreaccount1", "ContainerNotFound"]),
    ("no path", ["no model folders under as://devstoreaccount1/{container}/no/such/path",
                 "the Azure container '{container}' exists, check the path"]),
    ("wrong key", ["Azure at http://127.0.0.1:{port}/devstoreaccount1 rejected the credentials "
                   "from AZURE_STORAGE_KEY for as://devstoreaccount1/{container}/repo",
                   "AuthorizationFailure"]),
    ("no key", ["rejected the credentials from nowhere (anonymous"]),
    ("other account", ["AZURE_STORAGE_CONNECTION_STRING is for account 'devstoreaccount1', "
                       "the repository is in account 'other'"]),
    ("closed port", ["Azure endpoint http://127.0.0.1:{closed}/devstoreaccount1 cannot be "
                     "reached for as://devstoreaccount1/{container}/repo", "Connection refused"]),
])
def test_start_up_errors_name_the_wrong_part(azurite, container, case, expected):
    closed = free_port()
    url, env = azurite.url(container), azurite.env()
    endpoint_only = azurite.connection_string(key=None)
    if case == "no container":
        url = azurite.url("no-such-container")
    elif case == "no path":
        url = azurite.url(container, "no/such/path")
    elif case == "wrong key":
        env = azurite.env(AZURE_STORAGE_CONNECTION_STRING=endpoint_only,
                          AZURE_STORAGE_KEY=WRONG_KEY)
    elif case == "no key":
        env = azurite.env(AZURE_STORAGE_CONNECTION_STRING=endpoint_only)
    elif case == "other account":
        url = f"as://other/{container}/repo"
    elif case == "closed port":
        env = azurite.env(AZURE_STORAGE_CONNECTION_STRING=azurite.connection_string().replace(
            str(azurite.port), str(closed)))
    output = start_fails(url, env)
    for text in expected:
        assert text.format(container=container, port=azurite.port, closed=closed) in output, output


def test_validate_reads_the_container(azurite, container):
    status, output = run_oxiserve(["validate", azurite.url(container)], azurite.env())
    assert status == 0, output
    assert "ok: ident (identity, version 1)" in output
    assert "ok: add_sub (python, version 1)" in output
