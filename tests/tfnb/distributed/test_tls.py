"""A cluster over TLS (Dask's `distributed.Security`): sessions run as on TCP, and a client without a certificate
that the cluster's authority signed is refused. The certificates are made here, for 127.0.0.1 only."""

import datetime
import ipaddress
import socket
import ssl

import numpy as np
import pytest

import tfnb as tf

x509 = pytest.importorskip("cryptography.x509", reason="makes the test's certificates")
distributed = pytest.importorskip("distributed")
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

REFUSAL_S = 5   # how long a refused client may try to connect before it gives up


def authority(name: str):
    """A self-signed certificate authority: (key, certificate)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, name)])
    certificate = (_builder(subject, subject, key.public_key())
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    return key, certificate


def signed_for_loopback(issuer_key, issuer):
    """A certificate for 127.0.0.1 signed by `issuer`: (key, certificate)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "tfnb task")])
    names = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")])
    certificate = (_builder(subject, issuer.subject, key.public_key()).add_extension(names, critical=False)
                   .sign(issuer_key, hashes.SHA256()))
    return key, certificate


def _builder(subject, issuer, public_key):
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1)))


def write_pem(path, key, certificate) -> tuple[str, str]:
    key_path, certificate_path = path.with_suffix(".key"), path.with_suffix(".pem")
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    certificate_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return str(key_path), str(certificate_path)


@pytest.fixture(scope="module")
def credentials(tmp_path_factory):
    """The cluster's authority and one certificate for its scheduler, workers and clients; and a stranger's."""
    folder = tmp_path_factory.mktemp("tls")
    ca_key, ca = authority("tfnb test authority")
    _, ca_file = write_pem(folder / "ca", ca_key, ca)
    key_file, cert_file = write_pem(folder / "task", *signed_for_loopback(ca_key, ca))
    stranger_key, stranger = authority("someone else")
    stranger_key_file, stranger_cert_file = write_pem(folder / "stranger", *signed_for_loopback(stranger_key,
                                                                                                   stranger))
    security = distributed.Security(tls_ca_file=ca_file, tls_client_cert=cert_file, tls_client_key=key_file,
                                    tls_scheduler_cert=cert_file, tls_scheduler_key=key_file,
                                    tls_worker_cert=cert_file, tls_worker_key=key_file, require_encryption=True)
    return security, ca_file, (stranger_cert_file, stranger_key_file)


@pytest.fixture(scope="module")
def tls_server(credentials):
    with tf.train.Server(tf.train.ClusterSpec({"ps": ["localhost:0"], "worker": ["localhost:0"]}),
                         security=credentials[0]) as server:
        yield server


def test_a_cluster_over_tls_runs_sessions_as_over_tcp(tls_server):
    assert tls_server.target.startswith("tls://127.0.0.1:")
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/job:ps/task:0"):
        w = tf.Variable([3.0, 4.0], name="w")
    with tf.device("/job:worker/task:0"):
        y = tf.reduce_sum(x * w)
    with tf.Session(tls_server.target) as sess:
        sess.run(w.initializer)
        assert sess.run(y, {x: [1.0, 2.0]}) == 11.0
        assert np.array_equal(sess.run(w), [3.0, 4.0])


def test_a_client_without_the_clusters_certificate_is_refused(tls_server, credentials):
    _, ca_file, (stranger_cert, stranger_key) = credentials
    address = tls_server.scheduler_address
    with pytest.raises(OSError) as refused:   # the scheduler asks for a client certificate, ends the handshake
        tls_exchange(address, ssl.create_default_context(cafile=ca_file))
    assert isinstance(refused.value, ssl.SSLError | ConnectionResetError)   # not a timeout: a refusal
    stranger = distributed.Security(tls_ca_file=ca_file, tls_client_cert=stranger_cert, tls_client_key=stranger_key,
                                    require_encryption=True)
    with pytest.raises((OSError, TimeoutError)):   # a certificate another authority signed gets nowhere either
        distributed.Client(address, security=stranger, timeout=REFUSAL_S, set_as_default=False)
    with pytest.raises((OSError, TimeoutError)):   # nor does a client that speaks plain TCP
        distributed.Client(address.replace("tls://", "tcp://"), timeout=REFUSAL_S, set_as_default=False)


def tls_exchange(address: str, context: ssl.SSLContext) -> None:
    """A TLS handshake with the server at `address`, then one byte sent and one awaited (TLS 1.3 servers refuse a
    client's certificate only once the handshake seems done)."""
    host, port = address.removeprefix("tls://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=REFUSAL_S) as raw:
        with context.wrap_socket(raw, server_hostname=host) as connection:
            connection.sendall(b"\0")
            connection.recv(1)
