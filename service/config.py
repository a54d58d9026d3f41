"""Every setting, read once from the environment (or given by the CLI or a test), typed.

Each setting is declared once, as a field of `Config` made by `setting(...)`: its variable, its default, how its text
is read and, for a number, the range it must lie in. `Config.from_env` reads them all from that declaration and refuses
any value out of range with one sentence naming its variable; README.md's configuration table lists each one
(tests/test_config.py holds the two together).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Mapping

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
    MAX_SHAPED_RESPONSE_BYTES,
    MCP_TOOLS_PAGE_SIZE,
    RESPONSE_CAP_CHARS,
    SECONDS_PER_DAY,
    WORK_WAIT_SECONDS,
)

#: For test runs only: a shorter call deadline for a service started as a process (the conformance kit's own tests
#: start `toolgate serve` with it), so their timeouts cost a second or two. It can only lower the spec's ten seconds,
#: never raise them, and the service warns when it is set (docs/decisions.md).
TEST_CALL_DEADLINE_VARIABLE = "TOOLGATE_TEST_CALL_DEADLINE_SECONDS"
DATABASE_TIMEOUT_VARIABLE = "TOOLGATE_DATABASE_TIMEOUT_SECONDS"
#: The longest any of the client deadlines may be set to: past it a deadline no longer protects anything.
MAX_CLIENT_DEADLINE_SECONDS = 3_600


def _text(text: str) -> str:
    return text


def _url(text: str) -> str:
    return text.strip().rstrip("/")


def _networks(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def _whole(text: str) -> int:
    return int(text)


def _seconds(text: str) -> float:
    seconds = float(text)
    if math.isnan(seconds):
        raise ValueError(text)
    return seconds


@dataclass(frozen=True)
class Setting:
    """How one setting is read: its variable, its parser, and for a number the range it must lie in (`lowest` itself
    allowed for a whole number, excluded for seconds: no wait may be zero). `note` ends its refusal's sentence."""

    variable: str
    parse: Callable[[str], Any] = _text
    lowest: float | None = None
    highest: float | None = None
    note: str = ""

    @property
    def allowed(self) -> str:
        """The range in words, as README.md's configuration table gives it ('' for text)."""
        if self.parse is _whole:
            return f"{self.lowest:,} to {self.highest:,}"
        if self.parse is _seconds:
            return f"above {self.lowest:g}, at most {self.highest:,g}"
        return ""

    def refusal(self, text: str) -> str:
        """The one sentence that stops the service when `text` is not a value of this setting."""
        if self.parse is _whole:
            wanted = f"a whole number from {self.lowest} to {self.highest}"
        else:
            wanted = f"a number of seconds above {self.lowest:g} and at most {self.highest:g}"
        note = f" ({self.note})" if self.note else ""
        return f"{self.variable} must be {wanted}{note}; got {text[:40]!r}."

    def read(self, text: str) -> Any:
        """The value `text` gives this setting; ValueError in one sentence naming the variable otherwise."""
        try:
            value = self.parse(text)
        except ValueError:
            raise ValueError(self.refusal(text)) from None
        if self.lowest is not None and self.highest is not None and not self.within(value):
            raise ValueError(self.refusal(text))
        return value

    def within(self, value: float) -> bool:
        """Whether `value` lies in this setting's range."""
        assert self.lowest is not None and self.highest is not None
        if self.parse is _seconds:
            return self.lowest < value <= self.highest
        return self.lowest <= value <= self.highest


def setting(variable: str, default: Any, parse: Callable[[str], Any] = _text, lowest: float | None = None,
            highest: float | None = None, note: str = "") -> Any:
    """A `Config` field read from `variable` (its `default` when unset or blank), declared in one place."""
    declared = Setting(variable, parse, lowest, highest, note)
    return field(default=default, metadata={"setting": declared})


@dataclass(frozen=True)
class Config:
    """The service's settings. Build with `Config.from_env()`; override with `dataclasses.replace`."""

    database_url: str = setting("TOOLGATE_DATABASE_URL", "sqlite:///toolgate.db")
    #: Base of every organization's issuer: `{public_url}/orgs/{slug}`.
    public_url: str = setting("TOOLGATE_PUBLIC_URL", "http://127.0.0.1:8080", _url)
    #: CIDRs the dispatcher may reach besides public addresses (empty: public only).
    allowed_networks: tuple[str, ...] = setting("TOOLGATE_ALLOWED_NETWORKS", (), _networks)
    #: Encrypts private signing keys at rest. Required to sign anything.
    secret_key: str = setting("TOOLGATE_SECRET_KEY", "")
    model_provider: str = setting("TOOLGATE_MODEL_PROVIDER", "openai")
    model_base_url: str = setting("TOOLGATE_MODEL_BASE_URL", "")
    model: str = setting("TOOLGATE_MODEL", "")
    model_api_key: str = setting("TOOLGATE_MODEL_API_KEY", "")
    #: Steps of tool calls one turn may take before the platform stops it (a looping model).
    max_steps_per_turn: int = setting("TOOLGATE_MAX_STEPS_PER_TURN", 8, _whole, 1, 100)
    #: Seconds a whole turn may take; a step under way when it passes still finishes (each call has its own deadline).
    turn_deadline_seconds: float = setting("TOOLGATE_TURN_DEADLINE_SECONDS", 60.0, _seconds, 0,
                                           MAX_CLIENT_DEADLINE_SECONDS)
    #: Days a call record is kept before `toolgate calls purge` removes it.
    call_retention_days: int = setting("TOOLGATE_CALL_RETENTION_DAYS", 30, _whole, 1, 3_650)
    #: Database connections one process keeps, and how long a request waits for a free one before a 503.
    database_pool_size: int = setting("TOOLGATE_DATABASE_POOL_SIZE", DATABASE_POOL_SIZE, _whole, 1, 1_000)
    database_pool_wait_seconds: float = setting("TOOLGATE_DATABASE_POOL_WAIT_SECONDS", DATABASE_POOL_WAIT_SECONDS,
                                                _seconds, 0, MAX_DATABASE_TIMEOUT_SECONDS)
    #: The longest any one wait on the database may take (the pool's wait included) before a 503.
    database_timeout_seconds: float = setting(DATABASE_TIMEOUT_VARIABLE, DATABASE_TIMEOUT_SECONDS,
                                              _seconds, 0, MAX_DATABASE_TIMEOUT_SECONDS)
    #: Requests of one process doing their CPU work at once, and how long a request waits for a place before a 503.
    max_requests_at_work: int = setting("TOOLGATE_MAX_REQUESTS_AT_WORK", MAX_REQUESTS_AT_WORK, _whole, 1, 1_000)
    work_wait_seconds: float = setting("TOOLGATE_WORK_WAIT_SECONDS", WORK_WAIT_SECONDS, _seconds, 0,
                                       MAX_CLIENT_DEADLINE_SECONDS)
    #: The largest request body any route takes; a larger one is refused with 413 before it is read.
    max_request_bytes: int = setting("TOOLGATE_MAX_REQUEST_BYTES", MAX_REQUEST_BYTES, _whole, 1_024, 1_073_741_824)
    #: How long a request's head may take from its first byte, and its body without a byte (408 past either); how
    #: long a kept-alive connection may wait for its next request; how many client connections one process serves.
    head_timeout_seconds: float = setting("TOOLGATE_HEAD_TIMEOUT_SECONDS", HEAD_TIMEOUT_SECONDS, _seconds, 0,
                                          MAX_CLIENT_DEADLINE_SECONDS)
    body_timeout_seconds: float = setting("TOOLGATE_BODY_TIMEOUT_SECONDS", BODY_TIMEOUT_SECONDS, _seconds, 0,
                                          MAX_CLIENT_DEADLINE_SECONDS)
    idle_timeout_seconds: float = setting("TOOLGATE_IDLE_TIMEOUT_SECONDS", IDLE_TIMEOUT_SECONDS, _seconds, 0,
                                          MAX_CLIENT_DEADLINE_SECONDS)
    max_connections: int = setting("TOOLGATE_MAX_CONNECTIONS", MAX_CONNECTIONS, _whole, 1, 1_000_000)
    #: How long a tool call may take: the spec's ten seconds. Only a test gives a shorter one (in process, or to a
    #: process through TEST_CALL_DEADLINE_VARIABLE), so that timeouts are proven in about a second; one end-to-end
    #: test keeps the real ten.
    call_deadline_seconds: float = setting(TEST_CALL_DEADLINE_VARIABLE, CALL_DEADLINE_SECONDS, _seconds, 0,
                                           CALL_DEADLINE_SECONDS, "it only lowers the call deadline, for tests")
    #: Tool calls one organization may have in flight in one process; past it a step answers 429.
    max_calls_in_flight_per_org: int = setting("TOOLGATE_MAX_CALLS_IN_FLIGHT_PER_ORG", DEFAULT_CALLS_IN_FLIGHT_PER_ORG,
                                               _whole, 1, 1_000_000)
    #: Seconds a call awaiting the person's approval may be approved (never past the session token's expiry).
    approval_lifetime_seconds: float = setting("TOOLGATE_APPROVAL_LIFETIME_SECONDS", APPROVAL_LIFETIME_SECONDS,
                                               _seconds, 0, SECONDS_PER_DAY)
    #: Tools one page of a project server's MCP `tools/list` holds at most.
    mcp_page_size: int = setting("TOOLGATE_MCP_PAGE_SIZE", MCP_TOOLS_PAGE_SIZE, _whole, 1, 1_000)
    #: The largest raw 2xx body of a tool with a response shape, in bytes (decoded); the shaped result must still fit
    #: the 16,384 characters (docs/shaping.md).
    max_shaped_response_bytes: int = setting("TOOLGATE_MAX_SHAPED_RESPONSE_BYTES", MAX_SHAPED_RESPONSE_BYTES, _whole,
                                             RESPONSE_CAP_CHARS, 67_108_864)
    #: Extra Flask settings (tests use this for TESTING and the like).
    flask: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Config":
        """Read every TOOLGATE_* variable once; unset or blank ones keep their defaults; a value out of its range is
        a ValueError in one sentence naming its variable."""
        env = os.environ if environ is None else environ
        given = {}
        for name, declared in settings().items():
            text = env.get(declared.variable, "")
            if text.strip():
                given[name] = declared.read(text)
        return cls(**given)

    def with_overrides(self, **changes: Any) -> "Config":
        """A copy with the given settings changed (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def issuer(self, org_slug: str) -> str:
        """An organization's issuer URL: its keys live at `{issuer}/.well-known/jwks.json`."""
        return f"{self.public_url}/orgs/{org_slug}"


def settings() -> dict[str, Setting]:
    """Every declared setting by its `Config` field, in the order they are declared."""
    return {f.name: f.metadata["setting"] for f in fields(Config) if "setting" in f.metadata}

