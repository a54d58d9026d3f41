"""Session tokens are verified once and remembered until they expire, never past it, in a bounded cache."""
import time
from types import SimpleNamespace

import pytest

from service.conversations import sessions
from service.keys import session_tokens
from service.limits import CLOCK_SKEW_SECONDS
from tests.support.definitions import tool
from tests.support.live import Conversation, publish_project


@pytest.fixture
def verifications(monkeypatch):
    """Every verification the service runs (cache misses), as the tokens verified."""
    seen = []
    verify = sessions._verify
    monkeypatch.setattr(sessions, "_verify", lambda token, config: seen.append(token) or verify(token, config))
    monkeypatch.setattr(sessions, "_verified", {})
    return seen


def clock_at(monkeypatch, when: float) -> None:
    """The session cache and token verification both read the clock `when`."""
    fake = SimpleNamespace(time=lambda: when)
    monkeypatch.setattr(sessions, "time", fake)
    monkeypatch.setattr(session_tokens, "time", fake)


def tools(service, conversation, token):
    return service.as_session("GET", f"/v1/conversations/{conversation.id}/tools", token)


def test_a_token_is_verified_once_and_remembered_by_its_digest(service, backend, verifications):
    publish_project(service, [tool("search", backend + "/tools/search/echo")])
    token = service.session_token("alice")
    conversation = Conversation(service, token)
    for _ in range(3):
        assert tools(service, conversation, token).status_code == 200
    assert verifications == [token]
    assert all(len(digest) == 32 and token.encode() not in digest for _generation, digest in sessions._verified)


def test_an_expired_token_is_refused_even_though_remembered(service, backend, verifications, monkeypatch):
    publish_project(service, [tool("search", backend + "/tools/search/echo")])
    token = service.session_token("alice", ttl=60)
    conversation = Conversation(service, token)
    expires = sessions._verified[next(iter(sessions._verified))].claims.expires_at
    clock_at(monkeypatch, expires - 1)
    assert tools(service, conversation, token).status_code == 200 and len(verifications) == 1  # from the cache
    clock_at(monkeypatch, expires + 1)  # past exp: verified again, still inside the clock skew allowed
    assert tools(service, conversation, token).status_code == 200 and len(verifications) == 2
    clock_at(monkeypatch, expires + CLOCK_SKEW_SECONDS + 1)
    refused = tools(service, conversation, token)
    assert refused.status_code == 401 and "expired" in refused.json()["message"] and len(verifications) == 3


def test_the_cache_holds_at_most_its_bound_and_a_dropped_token_is_verified_again(service, backend, verifications,
                                                                                  monkeypatch):
    monkeypatch.setattr(sessions, "MAX_REMEMBERED_SESSIONS", 3)
    publish_project(service, [tool("search", backend + "/tools/search/echo")])
    tokens = [service.session_token(f"user-{i}") for i in range(5)]
    conversations = [Conversation(service, token) for token in tokens]
    assert len(sessions._verified) <= 3
    for conversation, token in zip(conversations, tokens):
        assert tools(service, conversation, token).status_code == 200
    assert len(sessions._verified) <= 3 and len(verifications) > 5  # the dropped ones were verified again


def test_a_remembered_token_of_a_rotated_key_answers_as_verifying_it_again_would(service, backend, verifications):
    # Decided: rotation keeps the retired key published longer than any token lives, so a token it signed stays
    # valid to its exp whether remembered or verified afresh; the cache changes no answer.
    publish_project(service, [tool("search", backend + "/tools/search/echo")])
    token = service.session_token("alice")
    conversation = Conversation(service, token)
    assert service.api("POST", "/v1/keys/rotate").status_code == 201
    assert tools(service, conversation, token).status_code == 200 and len(verifications) == 1
    sessions._verified.clear()
    assert tools(service, conversation, token).status_code == 200 and len(verifications) == 2
    assert time.time() < sessions._verified[next(iter(sessions._verified))].claims.expires_at
