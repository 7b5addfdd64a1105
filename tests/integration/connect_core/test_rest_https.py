"""HTTPS listeners on a real server: served with the configured certificate, refused by clients that
do not trust it, mutual TLS with ssl.client.auth, PKCS12 stores, and forwarding that verifies peers."""

from __future__ import annotations

import http.client
import json
import ssl
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, load_pem_private_key, pkcs12
from cryptography.x509 import load_pem_x509_certificate

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.rest.client import RestClient
from connect_core.rest.internal_endpoints import install_internal_routes
from connect_core.rest.resources import RestApp
from connect_core.rest.server import RestServer
from connect_core.rest.tls import SslSettings
from tests.integration.connect_core.rest_tls_helpers import Pki, https_request, make_pki
from tests.unit.connect_core.rest.fake_herder import FakeHerder

SOURCE = {"connector.class": "FileStreamSource"}


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path)


def serve(servers: list[RestServer], props: dict[str, str], herder: FakeHerder | None = None) -> RestServer:
    srv = RestServer.from_props(props)
    srv.start()
    servers.append(srv)
    srv.attach(RestApp.for_herder(herder or FakeHerder(), forwarder=srv.rest_client().forward))
    return srv


def test_https_is_served_and_advertised(pki: Pki, servers: list[RestServer]) -> None:
    srv = serve(servers, pki.server_props())
    port = srv.bound_port()
    assert srv.advertised_url() == f"https://127.0.0.1:{port}/"
    status, body, headers = https_request(
        port, "POST", "/connectors", pki.client_context(), {"name": "c1", "config": SOURCE}
    )
    assert status == 201 and body["name"] == "c1"
    assert headers["Location"] == f"https://127.0.0.1:{port}/connectors/c1"
    assert https_request(port, "GET", "/connectors", pki.client_context())[:2] == (200, ["c1"])


def test_client_that_does_not_trust_the_ca_is_refused(pki: Pki, tmp_path: Path, servers: list[RestServer]) -> None:
    srv = serve(servers, pki.server_props())
    with pytest.raises(ssl.SSLCertVerificationError):
        https_request(srv.bound_port(), "GET", "/", ssl.create_default_context())
    (tmp_path / "other").mkdir()
    other_ca = make_pki(tmp_path / "other")
    with pytest.raises(ssl.SSLCertVerificationError):
        https_request(srv.bound_port(), "GET", "/", other_ca.client_context())
    # ... and plain http on the https port gets no API answer
    conn = http.client.HTTPConnection("127.0.0.1", srv.bound_port(), timeout=10)
    try:
        with pytest.raises((http.client.HTTPException, OSError)):
            conn.request("GET", "/connectors")
            conn.getresponse().read()
    finally:
        conn.close()


def _refused(port: int, context: ssl.SSLContext) -> bool:
    """The TLS 1.3 server refuses a missing client certificate after the client's handshake ends,
    so the refusal shows on the first read."""
    try:
        https_request(port, "GET", "/connectors", context)
    except (ssl.SSLError, ConnectionError, OSError):
        return True
    return False


def test_mutual_tls_required(pki: Pki, servers: list[RestServer]) -> None:
    srv = serve(servers, pki.server_props(**{"listeners.https.ssl.client.auth": "required"}))
    port = srv.bound_port()
    assert _refused(port, pki.client_context(with_cert=False))
    assert https_request(port, "GET", "/connectors", pki.client_context(with_cert=True))[:2] == (200, [])


def test_mutual_tls_requested_lets_clients_without_certificate_in(pki: Pki, servers: list[RestServer]) -> None:
    srv = serve(servers, pki.server_props(**{"listeners.https.ssl.client.auth": "requested"}))
    port = srv.bound_port()
    assert https_request(port, "GET", "/connectors", pki.client_context())[:2] == (200, [])
    assert https_request(port, "GET", "/connectors", pki.client_context(with_cert=True))[:2] == (200, [])


def test_unprefixed_ssl_keys_and_pkcs12_stores(pki: Pki, tmp_path: Path, servers: list[RestServer]) -> None:
    pem = pki.server_pem.read_bytes()
    key = load_pem_private_key(pem, None)
    certs = [
        load_pem_x509_certificate(b"-----BEGIN CERTIFICATE-----" + part)
        for part in pem.split(b"-----BEGIN CERTIFICATE-----")[1:]
    ]
    keystore = tmp_path / "server.p12"
    keystore.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"server", key, certs[0], certs[1:] or None, BestAvailableEncryption(b"store-secret")
        )
    )  # type: ignore[arg-type]
    srv = serve(
        servers,
        {
            "listeners": "https://127.0.0.1:0",
            "ssl.keystore.location": str(keystore),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.password": "store-secret",
        },
    )
    assert https_request(srv.bound_port(), "GET", "/connectors", pki.client_context())[:2] == (200, [])


def test_http_and_https_listeners_side_by_side_advertise_http(pki: Pki, servers: list[RestServer]) -> None:
    props = pki.server_props()
    props["listeners"] = "https://127.0.0.1:0,http://127.0.0.1:0"
    srv = serve(servers, props)
    assert srv.advertised_url() == f"http://127.0.0.1:{srv.bound_port(1)}/"  # Java prefers http
    assert https_request(srv.bound_port(0), "GET", "/connectors", pki.client_context())[0] == 200


def test_forwarding_to_the_leader_verifies_its_certificate(pki: Pki, servers: list[RestServer]) -> None:
    leader = serve(servers, pki.server_props())
    follower_herder = FakeHerder()
    follower_herder.leader_url = leader.advertised_url()
    follower = serve(servers, pki.server_props(), follower_herder)
    status, body, _ = https_request(
        follower.bound_port(), "POST", "/connectors", pki.client_context(), {"name": "fwd", "config": SOURCE}
    )
    assert (status, body["name"]) == (201, "fwd")
    assert https_request(leader.bound_port(), "GET", "/connectors", pki.client_context())[1] == ["fwd"]

    # A client that does not trust the leader's CA gets Connect's 500 "IO Error", never a crash.
    status, raw, _ = RestClient(SslSettings()).forward(
        f"{leader.advertised_url()}connectors",
        "POST",
        json.dumps({"name": "x", "config": SOURCE}).encode(),
        {"Content-Type": "application/json"},
    )
    body = json.loads(raw)
    assert status == 500 and body["error_code"] == 500 and "IO Error trying to forward" in body["message"]
    assert "CERTIFICATE_VERIFY_FAILED" in body["message"]


@pytest.mark.parametrize(
    ("props", "key"),
    [
        ({"listeners": "https://127.0.0.1:0"}, "ssl.keystore.location"),
        (
            {"listeners": "https://127.0.0.1:0", "listeners.https.ssl.keystore.location": "/nonexistent/ks.pem"},
            "listeners.https.ssl.keystore.location",
        ),
        ({"listeners": "https://127.0.0.1:0", "ssl.keystore.location": "{ca}"}, "ssl.keystore.location"),
        (
            {"listeners": "https://127.0.0.1:0", "ssl.keystore.location": "{p12}", "ssl.keystore.password": "wrong"},
            "ssl.keystore.location",
        ),
        (
            {"listeners": "https://127.0.0.1:0", "ssl.keystore.location": "{server}", "ssl.client.auth": "maybe"},
            "ssl.client.auth",
        ),
        (
            {"listeners": "https://127.0.0.1:0", "ssl.keystore.location": "{server}", "ssl.keystore.type": "BKS"},
            "ssl.keystore.type",
        ),
        (
            {
                "listeners": "https://127.0.0.1:0",
                "ssl.keystore.location": "{server}",
                "ssl.truststore.location": "{server_dir}",
            },
            "ssl.truststore.location",
        ),
    ],
)
def test_bad_ssl_config_is_one_clear_error(pki: Pki, tmp_path: Path, props: dict[str, str], key: str) -> None:
    p12 = tmp_path / "bad.p12"
    p12.write_bytes(b"\x30\x82 not really pkcs12")
    paths = {"{ca}": str(pki.ca_pem), "{p12}": str(p12), "{server}": str(pki.server_pem), "{server_dir}": str(tmp_path)}
    props = {k: paths.get(v, v) for k, v in props.items()}
    with pytest.raises(ConfigError) as e:
        RestServer.from_props(props)
    assert [i.key for i in e.value.issues] == [key]
    assert "wrong" not in str(e.value) or "wrong ssl.keystore.password" in str(e.value)


class InternalFakeHerder(FakeHerder):
    def put_task_configs(self, name: str, configs: list[dict[str, str]], signature: object) -> None:
        self.calls.append(("put_task_configs", (name, configs)))


def test_task_configs_reach_an_https_leader_verified(pki: Pki, servers: list[RestServer]) -> None:
    leader_herder = InternalFakeHerder()
    leader = RestServer.from_props(pki.server_props())
    leader.start()
    servers.append(leader)
    leader.attach(install_internal_routes(RestApp.for_herder(leader_herder)))
    url = f"{leader.advertised_url()}connectors/c1/tasks"
    body = json.dumps([{"task.key": "v"}]).encode()
    RestClient.from_props(pki.server_props()).post_task_configs(url, body, {})
    assert ("put_task_configs", ("c1", [{"task.key": "v"}])) in leader_herder.calls
    with pytest.raises(ConnectError, match="IO error sending task configs"):
        RestClient().post_task_configs(url, body, {})  # does not trust the leader's CA
