"""A local S3 server (moto's server mode) that checks credentials as AWS
does, and model repositories put into it with boto3, for oxiserve to serve
from `s3://127.0.0.1:PORT/bucket/prefix` (remote_server.RemoteServer).

Authentication: moto accepts any keys until told otherwise; `Moto` creates
an IAM user with an access key while it does, then turns checking on
(`/moto-api/reset-auth` with 0 unchecked requests left, as
INITIAL_NO_AUTH_ACTION_COUNT=0 would), so from then on every request needs
that key and its secret: a wrong key id is InvalidAccessKeyId, a wrong
secret SignatureDoesNotMatch.
"""

import datetime
import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import requests

from helpers import wait_for
from servers import accepts, free_port, terminate

REGION = "us-east-1"
# The IAM user's one policy: everything.
ALLOW_ALL = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
)


class Moto:
    """moto's S3 server on a free loopback port, checking credentials;
    `key_id` and `secret` are the key it accepts, `denied_key` (environment
    variables) one it knows but allows nothing."""

    def __init__(self, log, tls=None):
        """`tls`: (authority's certificate, certificate, key) files to serve
        HTTPS with, as `certificates` makes them."""
        self.port = free_port()
        self.endpoint = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.log = log
        self.verify = str(tls[0]) if tls else True
        args = ["-c", str(tls[1]), "-k", str(tls[2])] if tls else []
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port),
                 *args],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_for(self._up, what=f"moto to listen on port {self.port}")
        # Unchecked until reset-auth: any key creates the user.
        iam = self._client("iam", "setup", "setup")
        iam.create_user(UserName="oxiserve")
        iam.put_user_policy(UserName="oxiserve", PolicyName="all", PolicyDocument=ALLOW_ALL)
        key = iam.create_access_key(UserName="oxiserve")["AccessKey"]
        self.key_id, self.secret = key["AccessKeyId"], key["SecretAccessKey"]
        # A user with a valid key and no policy: everything is AccessDenied.
        iam.create_user(UserName="nobody")
        key = iam.create_access_key(UserName="nobody")["AccessKey"]
        self.denied_key = {"AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                           "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}
        requests.post(f"{self.endpoint}/moto-api/reset-auth", data="0", timeout=10,
                      verify=self.verify).raise_for_status()
        self.s3 = self._client("s3", self.key_id, self.secret)

    def _up(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"moto exited:\n{Path(self.log).read_text()}")
        return accepts(self.port)

    def _client(self, service, key_id, secret):
        return boto3.client(
            service, endpoint_url=self.endpoint, region_name=REGION,
            aws_access_key_id=key_id, aws_secret_access_key=secret, verify=self.verify,
        )

    def url(self, bucket, prefix="repo"):
        """The repository in Triton's `s3://host:port/bucket/path` form
        (`s3://https://host:port/bucket/path` over HTTPS)."""
        scheme = "https://" if self.endpoint.startswith("https") else ""
        return f"s3://{scheme}127.0.0.1:{self.port}/{bucket}/{prefix}"

    def env(self, **vars):
        """This process's environment without its AWS settings, with the
        accepted key (unless `vars` says otherwise) and no shared files."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_ACCESS_KEY_ID=self.key_id,
            AWS_SECRET_ACCESS_KEY=self.secret,
            AWS_SHARED_CREDENTIALS_FILE="/nonexistent/credentials",
            AWS_CONFIG_FILE="/nonexistent/config",
        )
        env.update(vars)
        return {k: v for k, v in env.items() if v is not None}

    def upload(self, bucket, folder, prefix="repo"):
        """Puts every file under `folder` at `prefix/` in `bucket` (created if
        new), and a marker ("name/", as S3 consoles make) for each empty folder."""
        if bucket not in [b["Name"] for b in self.s3.list_buckets()["Buckets"]]:
            self.s3.create_bucket(Bucket=bucket)
        for path in sorted(Path(folder).rglob("*")):
            key = f"{prefix}/{path.relative_to(folder).as_posix()}"
            if path.is_file():
                self.s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
            elif not any(path.iterdir()):
                self.s3.put_object(Bucket=bucket, Key=f"{key}/", Body=b"")

    def delete(self, bucket, prefix):
        """Deletes every object under `prefix/`."""
        listed = self.s3.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/")
        for obj in listed.get("Contents", []):
            self.s3.delete_object(Bucket=bucket, Key=obj["Key"])

    def stop(self):
        terminate(self.proc)


def certificates(folder):
    """A certificate authority and a certificate it signed for 127.0.0.1:
    (authority's certificate, server's certificate, server's key) files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def name(common):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def certificate(subject, key, issuer, issuer_key, ca):
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(subject)).issuer_name(name(issuer)).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("test authority", ca_key, "test authority", ca_key, ca=True)
    cert = certificate("127.0.0.1", key, "test authority", ca_key, ca=False)
    files = [Path(folder) / n for n in ("ca.pem", "cert.pem", "key.pem")]
    files[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return files
