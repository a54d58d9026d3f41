"""A provider's key set: fetched through the outbound guard from a real server (each fetch counted), cached with a
lifetime, refetched on an unknown kid at most once per cooldown, and kept while the provider is down. The clock is
the test's, so no test waits out a lifetime or a cooldown."""
import pytest

from service.dispatch import AddressGuard
from service.identity.fetch import Unreadable, fetch_json
from service.identity.key_sets import KeySetCache, ProviderUnavailable


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


LOOPBACK_ALLOWED = AddressGuard(["127.0.0.0/8"])


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def cache(clock):
    return KeySetCache(lambda uri: fetch_json(uri, LOOPBACK_ALLOWED), clock, lifetime=300, cooldown=30)


def test_twenty_tokens_with_unknown_kids_cost_the_provider_at_most_two_fetches(provider, cache):
    uri = f"{provider.issuer}/jwks"
    assert cache.key(uri, "rsa-1") is not None
    for n in range(20):
        assert cache.key(uri, f"forged-{n}") is None
    assert provider.key_set_fetches <= 2


def test_a_burst_of_unknown_kids_before_any_fetch_costs_one(provider, cache):
    uri = f"{provider.issuer}/jwks"
    assert [cache.key(uri, f"forged-{n}") for n in range(20)] == [None] * 20
    assert provider.key_set_fetches == 1


def test_a_known_kid_is_served_from_the_cache_within_its_lifetime(provider, cache, clock):
    uri = f"{provider.issuer}/jwks"
    for _ in range(10):
        assert cache.key(uri, "rsa-1") is not None
        clock.now += 20
    assert provider.key_set_fetches == 1


def test_past_its_lifetime_the_key_set_is_fetched_again(provider, cache, clock):
    uri = f"{provider.issuer}/jwks"
    cache.key(uri, "rsa-1")
    clock.now += 301
    cache.key(uri, "rsa-1")
    assert provider.key_set_fetches == 2


def test_a_rotated_in_key_is_found_once_the_cooldown_has_passed(provider, cache, clock):
    uri = f"{provider.issuer}/jwks"
    cache.key(uri, "rsa-1")
    kid = provider.rotate_in()
    clock.now += 31
    assert cache.key(uri, kid) is not None
    assert provider.key_set_fetches == 2


def test_cached_keys_keep_verifying_while_the_provider_is_down(provider, cache, clock):
    uri = f"{provider.issuer}/jwks"
    assert cache.key(uri, "rsa-1") is not None
    provider.down = True
    clock.now += 10_000  # long past the lifetime: the refetch fails, the keys stay
    assert cache.key(uri, "rsa-1") is not None
    assert cache.key(uri, "forged") is None
    assert provider.key_set_fetches == 2  # one failed refetch, then the cooldown


def test_a_provider_never_read_and_down_is_unavailable(provider, cache):
    provider.down = True
    with pytest.raises(ProviderUnavailable):
        cache.key(f"{provider.issuer}/jwks", "rsa-1")


def test_the_guard_refuses_loopback_unless_the_operator_allows_it(provider):
    with pytest.raises(Unreadable, match="may not be reached: 127.0.0.1 is loopback"):
        fetch_json(f"{provider.issuer}/jwks", AddressGuard())


def test_a_key_set_past_the_size_cap_is_not_read(provider):
    with pytest.raises(Unreadable, match="more than 100 bytes"):
        fetch_json(f"{provider.issuer}/jwks", LOOPBACK_ALLOWED, cap=100)


def test_a_provider_slower_than_the_deadline_is_unreadable():
    import gevent
    from gevent.server import StreamServer

    def silent(sock, address):  # accepts, reads, never answers
        sock.recv(1024)
        gevent.sleep(5)

    server = StreamServer(("127.0.0.1", 0), silent)
    server.start()
    try:
        with pytest.raises(Unreadable, match="within 0.2 seconds"):
            fetch_json(f"http://127.0.0.1:{server.server_port}/jwks", LOOPBACK_ALLOWED, deadline=0.2)
    finally:
        server.stop(timeout=0.1)
