"""Certificate authorities and PEM files for the TLS tests, made with `cryptography`."""

import datetime
import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_DAY = datetime.timedelta(days=1)


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key_pem(key, pkcs8):
    """`key` in PEM: PKCS#8 ("BEGIN PRIVATE KEY") or the traditional form
    ("BEGIN RSA PRIVATE KEY", "BEGIN EC PRIVATE KEY")."""
    form = serialization.PrivateFormat.PKCS8 if pkcs8 else serialization.PrivateFormat.TraditionalOpenSSL
    return key.private_bytes(serialization.Encoding.PEM, form, serialization.NoEncryption())


class Authority:
    """A certificate authority that writes certificates it signs into files."""

    def __init__(self, name):
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(_name(name))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _DAY)
            .not_valid_after(now + _DAY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True, content_commitment=False, key_encipherment=False,
                    data_encipherment=False, key_agreement=False, key_cert_sign=True,
                    crl_sign=True, encipher_only=False, decipher_only=False,
                ),
                critical=True,
            )
            .sign(self.key, hashes.SHA256())
        )

    def write(self, path):
        """Writes the authority's certificate to `path`; returns `path`."""
        path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        return path

    def issue(self, cert_path, key_path, client=False, rsa_key=False, pkcs8=True):
        """Writes a new certificate for localhost and 127.0.0.1 (a server's, or
        a client's if `client`) and its key (EC P-256, or RSA 2048 if
        `rsa_key`, in PKCS#8 or the traditional form); returns both paths."""
        key = rsa.generate_private_key(65537, 2048) if rsa_key else ec.generate_private_key(ec.SECP256R1())
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        now = datetime.datetime.now(datetime.timezone.utc)
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name("client" if client else "localhost"))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _DAY)
            .not_valid_after(now + _DAY)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        key_path.write_bytes(_key_pem(key, pkcs8))
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return cert_path, key_path


def ssl_flags(protocol, pki, mutual=False):
    """The `--<protocol>-*ssl*` flags serving `pki`'s server certificate
    (see conftest's `pki`); `mutual` asks for client certificates of its CA."""
    flags = [
        f"--{protocol}-server-cert={pki / 'server.pem'}",
        f"--{protocol}-server-key={pki / 'server.key'}",
    ]
    if mutual:
        return [*flags, f"--{protocol}-use-ssl-mutual=true", f"--{protocol}-root-cert={pki / 'ca.pem'}"]
    return [*flags, f"--{protocol}-use-ssl=true"]
