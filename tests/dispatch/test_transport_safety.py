"""What the transport refuses to do: reach denied addresses, trust DNS twice, follow the environment,
keep cookies, skip TLS verification, or send any credential but the one it was given."""
import json
import socket

import pytest

from service.definition import Parameter, ToolDefinition
from service.dispatch import AddressGuard, BuiltRequest, build_request, client, connection, send


def get(url, guard, authorization="Bearer t"):
    return send(BuiltRequest("GET", url), guard=guard, authorization=authorization)


def fake_dns(monkeypatch, answers: dict[str, list[list[str]]]):
    """Stand in for DNS: each lookup of a host pops its next answer. Returns the lookups made."""
    lookups = []

    def resolve(host, port):
        lookups.append(host)
        addresses = answers[host].pop(0) if len(answers[host]) > 1 else answers[host][0]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    monkeypatch.setattr(connection, "resolve", resolve)
    return lookups


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "127.1"])
def test_loopback_is_refused_unless_the_operator_allows_it(fresh_endpoint, host):
    outcome = get(fresh_endpoint.url("/text/200/ok", host=host), AddressGuard())
    assert outcome.kind == "transport-error" and "AddressDenied" in outcome.detail and "loopback" in outcome.detail
    assert fresh_endpoint.connections == 0  # refused before connecting, not after
    assert get(fresh_endpoint.url("/text/200/ok", host=host), AddressGuard(["127.0.0.0/8"])).output == "ok"


def test_only_the_allowed_addresses_of_a_host_are_connected_to(fresh_endpoint, fresh_guard, monkeypatch):
    fake_dns(monkeypatch, {"mixed.test": [["10.0.0.1", "169.254.169.254", "127.0.0.1"]]})
    assert get(fresh_endpoint.url("/text/200/ok", host="mixed.test"), fresh_guard).output == "ok"
    assert fresh_endpoint.received[-1].header("Host") == f"mixed.test:{fresh_endpoint.port}"


def test_a_host_resolving_only_to_internal_addresses_is_refused(fresh_guard, monkeypatch):
    fake_dns(monkeypatch, {"internal.test": [["10.0.0.1", "169.254.169.254"]]})
    outcome = get("http://internal.test/", fresh_guard)
    assert outcome.kind == "transport-error"
    assert "10.0.0.1 is private" in outcome.detail and "169.254.169.254 is link-local" in outcome.detail


def test_each_connection_resolves_once_and_connects_to_what_was_checked(fresh_endpoint, fresh_guard, monkeypatch):
    # DNS rebinding: the first answer passes the guard, the next would point inside. A client that
    # resolved again to connect would reach 10.0.0.1; this one uses the address it checked.
    lookups = fake_dns(monkeypatch, {"rebind.test": [["127.0.0.1"], ["10.0.0.1"]]})
    for _ in range(3):
        assert get(fresh_endpoint.url("/text/200/ok", host="rebind.test"), fresh_guard).output == "ok"
    assert lookups == ["rebind.test"] and fresh_endpoint.connections == 1


def test_a_new_connection_checks_the_new_answer(fresh_endpoint, fresh_guard, monkeypatch):
    lookups = fake_dns(monkeypatch, {"rebind.test": [["127.0.0.1"], ["10.0.0.1"]]})
    assert get(fresh_endpoint.url("/huge", host="rebind.test"), fresh_guard).kind == "response-too-big"
    outcome = get(fresh_endpoint.url("/text/200/ok", host="rebind.test"), fresh_guard)
    assert outcome.kind == "transport-error" and "10.0.0.1 is private" in outcome.detail
    assert lookups == ["rebind.test", "rebind.test"]


def test_the_authorization_is_sent_exactly_and_no_other_credential(endpoint, loopback_guard, tmp_path, monkeypatch,
                                                                    closed_port):
    (tmp_path / "netrc").write_text("machine 127.0.0.1 login stolen password hunter2\n")
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    for proxy in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(proxy, f"http://127.0.0.1:{closed_port}")  # trusting it would fail the call
    assert get(endpoint.url("/set-cookie"), loopback_guard).output == "ok"
    outcome = get(endpoint.url("/echo"), loopback_guard, authorization="Bearer a.b.c")
    seen = json.loads(outcome.output)
    headers = {name.lower(): value for name, value in seen["headers"]}
    assert headers["authorization"] == "Bearer a.b.c"
    assert [name for name, _ in seen["headers"] if name.lower() == "authorization"] == ["Authorization"]
    assert not {"cookie", "cookie2", "proxy-authorization"} & headers.keys()
    assert headers["user-agent"] == "Toolgate" and headers["accept-encoding"] == "gzip, deflate"


def test_a_built_request_arrives_as_built(endpoint, loopback_guard):
    tool = ToolDefinition("order", "d", "POST", endpoint.url("/echo/{id}/tail?v=1"), scope="per_user",
                          parameters=(Parameter("subject", "string", "body"), Parameter("id", "string", "path"),
                                      Parameter("q", "string", "query"), Parameter("n", "number", "body")))
    built = build_request(tool, {"id": "../admin?x#y z", "q": "a&b=c", "n": 2, "subject": "mallory"}, "alice")
    seen = json.loads(send(built, guard=loopback_guard, authorization="t").output)
    assert seen["method"] == "POST"
    assert seen["target"] == "/echo/..%2Fadmin%3Fx%23y%20z/tail?v=1&q=a%26b%3Dc"
    assert json.loads(seen["body"]) == {"subject": "alice", "n": 2}
    assert ["Content-Type", "application/json"] in seen["headers"]


def test_tls_verifies_the_certificate_against_the_url_hostname(tls_endpoint, authority, fresh_guard, monkeypatch):
    monkeypatch.setattr(client, "ca_bundle", lambda: str(authority.ca_file))
    outcome = get(tls_endpoint.url("/text/200/secure", host="localhost"), fresh_guard)
    assert outcome.output == "secure"
    assert tls_endpoint.server_names == ["localhost"]  # SNI is the hostname, not the resolved address
    mismatch = get(tls_endpoint.url("/text/200/secure", host="127.0.0.1"), fresh_guard)
    assert mismatch.kind == "transport-error" and "SSLError" in mismatch.detail


def test_an_untrusted_certificate_is_a_transport_error(tls_endpoint, fresh_guard):
    outcome = get(tls_endpoint.url("/text/200/secure", host="localhost"), fresh_guard)
    assert outcome.kind == "transport-error" and "CERTIFICATE_VERIFY_FAILED" in outcome.detail
    assert tls_endpoint.received == []


def test_an_address_written_out_is_not_looked_up(fresh_endpoint, fresh_guard, monkeypatch):
    def no_lookup(*_args, **_kwargs):
        raise AssertionError("looked up")

    monkeypatch.setattr(connection.gevent.socket, "getaddrinfo", no_lookup)
    assert get(fresh_endpoint.url("/text/200/ok", host="127.0.0.1"), fresh_guard).output == "ok"
    refused = get(fresh_endpoint.url("/text/200/ok", host="127.0.0.1"), AddressGuard())
    assert refused.kind == "transport-error" and "loopback" in refused.detail  # the guard judges it all the same
