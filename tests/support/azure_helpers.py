"""A local Azure Blob Storage server, Azurite (npm's `azurite`, installed by
scripts/tools.sh), which checks Shared Key signatures as Azure does, and
model repositories put into it with Azure's own client (azure-storage-blob),
for oxiserve to serve from `as://devstoreaccount1/container/prefix`.

Azurite serves the well-known development account `devstoreaccount1` with
its published key; a wrong key is AuthenticationFailed."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from azure.storage.blob import BlobServiceClient

from helpers import wait_for
from servers import accepts, free_port, terminate

ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def binary():
    """Azurite's blob server, or a skip saying why there is none."""
    found = shutil.which("azurite-blob")
    if found is None:
        pytest.skip("azurite-blob not found: scripts/tools.sh installs it "
                    "(npm install -g azurite)")
    return found


class Azurite:
    """Azurite's blob service on a free loopback port, blobs in memory."""

    def __init__(self, log):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}/{ACCOUNT}"
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [binary(), "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
                 "--inMemoryPersistence", "--silent", "--disableTelemetry",
                 "--skipApiVersionCheck"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, cwd=Path(log).parent,
            )
        wait_for(self._up, what=f"Azurite to listen on port {self.port}")
        self.client = BlobServiceClient.from_connection_string(self.connection_string())

    def _up(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"Azurite exited:\n{Path(self.log).read_text()}")
        return accepts(self.port)

    def connection_string(self, key=KEY):
        """The connection string of the account (`key=None`: the endpoint only)."""
        text = f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};BlobEndpoint={self.endpoint};"
        return text + (f"AccountKey={key};" if key else "")

    @staticmethod
    def url(container, prefix="repo"):
        return f"as://{ACCOUNT}/{container}/{prefix}"

    def env(self, **vars):
        """This process's environment without Azure's settings, with the
        account's connection string (unless `vars` says otherwise)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_")}
        env.update(AZURE_STORAGE_CONNECTION_STRING=self.connection_string())
        env.update(vars)
        return {k: v for k, v in env.items() if v is not None}

    def upload(self, container, folder, prefix="repo"):
        """Puts every file under `folder` at `prefix/` in `container` (created
        if new), and a marker ("name/") for each empty folder."""
        blobs = self.client.get_container_client(container)
        if not blobs.exists():
            blobs.create_container()
        for path in sorted(Path(folder).rglob("*")):
            key = f"{prefix}/{path.relative_to(folder).as_posix()}"
            if path.is_file():
                blobs.upload_blob(key, path.read_bytes(), overwrite=True)
            elif not any(path.iterdir()):
                blobs.upload_blob(f"{key}/", b"", overwrite=True)

    def put(self, container, key, data):
        self.client.get_container_client(container).upload_blob(key, data, overwrite=True)

    def get(self, container, key):
        return self.client.get_container_client(container).download_blob(key).readall()

    def delete(self, container, prefix):
        """Deletes every blob under `prefix/`."""
        blobs = self.client.get_container_client(container)
        for blob in blobs.list_blobs(name_starts_with=f"{prefix}/"):
            blobs.delete_blob(blob.name)

    def delete_container(self, container):
        self.client.delete_container(container)

    def stop(self):
        self.client.close()
        terminate(self.proc)
