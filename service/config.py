"""Every setting, read once from the environment (or given by the CLI or a test), typed."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

# Only plain modules here: `service` is imported (through this) before an entry point's gevent patching.
from service.limits import (
    APPROVAL_LIFETIME_SECONDS,
    BODY_TIMEOUT_SECONDS,
    CALL_DEADLINE_SECONDS,
    DATABASE_POOL_SIZE,
    DATABASE_POOL_WAIT_SECONDS,
    DATABASE_TIMEOUT_SECONDS,
    DEFAULT_CALLS_IN_FLIGHT_PER_ORG,
    HEAD_TIMEOUT_SECONDS,
    IDLE_TIMEOUT_SECONDS,
    MAX_CONNECTIONS,
    MAX_DATABASE_TIMEOUT_SECONDS,
    MAX_REQUEST_BYTES,
    MAX_REQUESTS_AT_WORK,
    WORK_WAIT_SECONDS,
)

DEFAULT_DATABASE_URL = "sqlite:///toolgate.db"
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8080"
#: For test runs only: a shorter call deadline for a service started as a process (the conformance kit's own tests
#: start `toolgate serve` with it), so their timeouts cost a second or two. It can only lower the spec's ten seconds,
#: never raise them, and the service warns when it is set (docs/decisions.md).
TEST_CALL_DEADLINE_VARIABLE = "TOOLGATE_TEST_CALL_DEADLINE_SECONDS"
DATABASE_TIMEOUT_VARIABLE = "TOOLGATE_DATABASE_TIMEOUT_SECONDS"


@dataclass(frozen=True)
class Config:
    """The service's settings. Build with `Config.from_env()`; override with `dataclasses.replace`."""

    database_url: str = DEFAULT_DATABASE_URL
    #: Base of every organization's issuer: `{public_url}/orgs/{slug}`.
    public_url: str = DEFAULT_PUBLIC_URL
    #: CIDRs the dispatcher may reach besides public addresses (empty: public only).
    allowed_networks: tuple[str, ...] = ()
    #: Encrypts private signing keys at rest. Required to sign anything.
    secret_key: str = ""
    model_provider: str = "openai"
    model_base_url: str = ""
    model: str = ""
    model_api_key: str = ""
    #: Steps of tool calls one turn may take before the platform stops it (a looping model).
    max_steps_per_turn: int = 8
    #: Seconds a whole turn may take; a step under way when it passes still finishes (each call has its own deadline).
    turn_deadline_seconds: float = 60.0
    #: Days a call record is kept before `toolgate calls purge` removes it.
    call_retention_days: int = 30
    #: Database connections one process keeps, and how long a request waits for a free one before a 503.
    database_pool_size: int = DATABASE_POOL_SIZE
    database_pool_wait_seconds: float = DATABASE_POOL_WAIT_SECONDS
    #: The longest any one wait on the database may take (the pool's wait included) before a 503.
    database_timeout_seconds: float = DATABASE_TIMEOUT_SECONDS
    #: Requests of one process doing their CPU work at once, and how long a request waits for a place before a 503.
    max_requests_at_work: int = MAX_REQUESTS_AT_WORK
    work_wait_seconds: float = WORK_WAIT_SECONDS
    #: The largest request body any route takes; a larger one is refused with 413 before it is read.
    max_request_bytes: int = MAX_REQUEST_BYTES
    #: How long a request's head may take from its first byte, and its body without a byte (408 past either); how
    #: long a kept-alive connection may wait for its next request; how many client connections one process serves.
    head_timeout_seconds: float = HEAD_TIMEOUT_SECONDS
    body_timeout_seconds: float = BODY_TIMEOUT_SECONDS
    idle_timeout_seconds: float = IDLE_TIMEOUT_SECONDS
    max_connections: int = MAX_CONNECTIONS
    #: How long a tool call may take: the spec's ten seconds. Only a test gives a shorter one (in process, or to a
    #: process through TEST_CALL_DEADLINE_VARIABLE), so that timeouts are proven in about a second; one end-to-end
    #: test keeps the real ten.
    call_deadline_seconds: float = CALL_DEADLINE_SECONDS
    #: Tool calls one organization may have in flight in one process; past it a step answers 429.
    max_calls_in_flight_per_org: int = DEFAULT_CALLS_IN_FLIGHT_PER_ORG
    #: Seconds a call awaiting the person's approval may be approved (never past the session token's expiry).
    approval_lifetime_seconds: float = APPROVAL_LIFETIME_SECONDS
    #: Extra Flask settings (tests use this for TESTING and the like).
    flask: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Config":
        """Read every TOOLGATE_* variable once; unset ones keep their defaults."""
        env = os.environ if environ is None else environ
        networks = tuple(n.strip() for n in env.get("TOOLGATE_ALLOWED_NETWORKS", "").split(",") if n.strip())
        return cls(
            database_url=env.get("TOOLGATE_DATABASE_URL", DEFAULT_DATABASE_URL),
            public_url=env.get("TOOLGATE_PUBLIC_URL", DEFAULT_PUBLIC_URL).rstrip("/"),
            allowed_networks=networks,
            secret_key=env.get("TOOLGATE_SECRET_KEY", ""),
            model_provider=env.get("TOOLGATE_MODEL_PROVIDER", "openai"),
            model_base_url=env.get("TOOLGATE_MODEL_BASE_URL", ""),
            model=env.get("TOOLGATE_MODEL", ""),
            model_api_key=env.get("TOOLGATE_MODEL_API_KEY", ""),
            max_steps_per_turn=_number(env, "TOOLGATE_MAX_STEPS_PER_TURN", int, "8"),
            turn_deadline_seconds=_number(env, "TOOLGATE_TURN_DEADLINE_SECONDS", float, "60"),
            call_retention_days=_number(env, "TOOLGATE_CALL_RETENTION_DAYS", int, "30"),
            database_pool_size=_number(env, "TOOLGATE_DATABASE_POOL_SIZE", int, DATABASE_POOL_SIZE),
            database_pool_wait_seconds=_number(env, "TOOLGATE_DATABASE_POOL_WAIT_SECONDS", float,
                                               DATABASE_POOL_WAIT_SECONDS),
            database_timeout_seconds=_seconds(env, DATABASE_TIMEOUT_VARIABLE, DATABASE_TIMEOUT_SECONDS,
                                              MAX_DATABASE_TIMEOUT_SECONDS),
            max_requests_at_work=_number(env, "TOOLGATE_MAX_REQUESTS_AT_WORK", int, MAX_REQUESTS_AT_WORK),
            work_wait_seconds=_number(env, "TOOLGATE_WORK_WAIT_SECONDS", float, WORK_WAIT_SECONDS),
            max_request_bytes=_number(env, "TOOLGATE_MAX_REQUEST_BYTES", int, MAX_REQUEST_BYTES),
            head_timeout_seconds=_seconds(env, "TOOLGATE_HEAD_TIMEOUT_SECONDS", HEAD_TIMEOUT_SECONDS),
            body_timeout_seconds=_seconds(env, "TOOLGATE_BODY_TIMEOUT_SECONDS", BODY_TIMEOUT_SECONDS),
            idle_timeout_seconds=_seconds(env, "TOOLGATE_IDLE_TIMEOUT_SECONDS", IDLE_TIMEOUT_SECONDS),
            max_connections=_count(env, "TOOLGATE_MAX_CONNECTIONS", MAX_CONNECTIONS),
            max_calls_in_flight_per_org=_number(env, "TOOLGATE_MAX_CALLS_IN_FLIGHT_PER_ORG", int,
                                                DEFAULT_CALLS_IN_FLIGHT_PER_ORG),
            approval_lifetime_seconds=_number(env, "TOOLGATE_APPROVAL_LIFETIME_SECONDS", float,
                                              APPROVAL_LIFETIME_SECONDS),
            call_deadline_seconds=_test_call_deadline(env.get(TEST_CALL_DEADLINE_VARIABLE, "")),
        )

    def with_overrides(self, **changes: Any) -> "Config":
        """A copy with the given settings changed (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def issuer(self, org_slug: str) -> str:
        """An organization's issuer URL: its keys live at `{issuer}/.well-known/jwks.json`."""
        return f"{self.public_url}/orgs/{org_slug}"


#: The longest any of the client deadlines may be set to: past it a deadline no longer protects anything.
MAX_CLIENT_DEADLINE_SECONDS = 3_600


def _seconds(env: Mapping[str, str], name: str, default: float, most: float = MAX_CLIENT_DEADLINE_SECONDS) -> float:
    """A deadline from `name`: seconds above 0 and at most `most`; ValueError in one sentence naming it otherwise."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= most:  # NaN fails this too
        raise ValueError(f"{name} must be a number of seconds above 0 and at most {most:g}; got {text!r}.")
    return seconds


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """A whole number of at least 1 from `name`; ValueError in one sentence otherwise."""
    text = env.get(name, "").strip()
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"{name} must be a whole number of at least 1; got {text!r}.")
    return int(text)


def _number(env: Mapping[str, str], name: str, kind: type, default: object) -> Any:
    """The number variable `name` holds (`kind`: int or float; `default` when unset or blank); ValueError naming it
    when it holds anything else, so a command says which setting it cannot take instead of int()'s sentence."""
    text = env.get(name, "")
    if not text.strip():
        return kind(default)
    try:
        return kind(text)
    except ValueError:
        wanted = "a whole number" if kind is int else "a number"
        raise ValueError(f"{name} must be {wanted}; got {text[:40]!r}.") from None


def _test_call_deadline(text: str) -> float:
    """The call deadline TEST_CALL_DEADLINE_VARIABLE asks for (the spec's when unset); ValueError past the spec's."""
    if not text.strip():
        return CALL_DEADLINE_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= CALL_DEADLINE_SECONDS:
        raise ValueError(f"{TEST_CALL_DEADLINE_VARIABLE} must be a number of seconds above 0 and at most "
                         f"{CALL_DEADLINE_SECONDS:g} (it only lowers the call deadline, for tests); got {text!r}.")
    return seconds
