"""The MCP wire, without Flask: the JSON-RPC 2.0 envelope, protocol versions, signed sessions and the Origin rule.

The endpoint speaks the Streamable HTTP transport of MCP revisions 2025-06-18 and 2025-11-25: one JSON-RPC message
per POST (batches were removed in 2025-06-18), answered with one JSON body.

Sessions are stateless: the `Mcp-Session-Id` is an HMAC-signed token naming the organization, the API key and the
negotiated protocol version, so any instance of the service accepts a session another instance issued, and nothing
is stored. The key is still authenticated on every request; the session only has to belong to it.
"""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from itsdangerous import BadSignature, URLSafeSerializer

#: The revisions this server speaks, oldest first. Earlier ones either used another transport (2024-11-05) or
#: require accepting batches (2025-03-26), which this server does not.
SUPPORTED_VERSIONS = ("2025-06-18", "2025-11-25")
LATEST_VERSION = SUPPORTED_VERSIONS[-1]

# JSON-RPC 2.0's codes, and MCP's code for a protocol version the server does not speak.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: JSON-RPC's range for implementation-defined server errors: the service cannot answer now (database away);
#: the error's data is the REST error shape, so a client reads the same code and message everywhere.
SERVER_UNAVAILABLE = -32000

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"

# Names this use of TOOLGATE_SECRET_KEY, so a session id cannot be replayed as anything else the secret signs.
_SESSION_SALT = "toolgate.mcp.session.v1"
#: The same for a project server's session ids (`project_session.py`), so neither kind passes for the other.
PROJECT_SESSION_SALT = "toolgate.mcp.project-session.v1"
#: A signed session id is about 120 characters; anything far longer is not one of ours and is not even parsed.
_MAX_SESSION_ID_CHARS = 512


@dataclass
class ProtocolError(Exception):
    """A message that cannot be answered with a result: its HTTP status and its JSON-RPC error."""

    status: int
    code: int
    message: str
    id: str | int | None = None
    data: Any = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def to_message(self) -> dict[str, Any]:
        return error_message(self.id, self.code, self.message, self.data)


@dataclass(frozen=True)
class Reply:
    """A JSON-RPC response from the client to a request the server sent it (a project server's elicitation)."""

    id: str | int
    result: dict[str, Any] | None
    error: dict[str, Any] | None


@dataclass(frozen=True)
class Message:
    """One JSON-RPC request (it has an id) or notification (it has none) from the client."""

    method: str
    params: dict[str, Any]
    id: str | int | None = None

    @property
    def is_request(self) -> bool:
        return self.id is not None


@dataclass(frozen=True)
class Session:
    """What a session id vouches for: whose it is and which protocol version it negotiated."""

    organization_id: int
    key_id: str
    protocol_version: str


def result_message(id_: str | int, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def error_message(id_: str | int | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": error}


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


#: NaN and Infinity are Python's extensions, not JSON. Made once: `json.loads` with an argument makes a decoder on
#: every call, which cost a tools/call about as much as parsing its body.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _json_value(body: bytes) -> Any:
    """`json.loads(body, parse_constant=_refuse_constant)`, with the decoder made once."""
    if not isinstance(body, (bytes, bytearray)):
        return json.loads(body, parse_constant=_refuse_constant)
    return _DECODER.decode(body.decode(json.detect_encoding(body), "surrogatepass"))  # as json.loads reads bytes


def _envelope(body: bytes) -> dict[str, Any]:
    """The one JSON-RPC object in `body`, its envelope checked, or a ProtocolError saying why it is not one."""
    try:
        data = _json_value(body)  # deep nesting raises RecursionError
    except (ValueError, RecursionError):
        raise ProtocolError(400, PARSE_ERROR, "Parse error: the body is not a JSON document.") from None
    if isinstance(data, list):
        raise ProtocolError(400, INVALID_REQUEST, "Batches are not supported: send one JSON-RPC message per POST.")
    if not isinstance(data, dict):
        raise ProtocolError(400, INVALID_REQUEST, "A JSON-RPC message is a JSON object.")
    if data.get("jsonrpc") != "2.0":
        raise ProtocolError(400, INVALID_REQUEST, 'A JSON-RPC message says "jsonrpc": "2.0".')
    id_ = data.get("id")
    if "id" in data and (isinstance(id_, bool) or not isinstance(id_, (str, int))):
        raise ProtocolError(400, INVALID_REQUEST, "A request id is a string or an integer, never null.")
    return data


def parse_message(body: bytes) -> Message:
    """The one JSON-RPC message in `body`, or a ProtocolError saying why it is not one."""
    return _message(_envelope(body))


def parse_incoming(body: bytes) -> Message | Reply:
    """The one JSON-RPC message in `body`, which may also be the client's response to a request the server sent."""
    data = _envelope(body)
    if "method" not in data and ("result" in data) != ("error" in data) and "id" in data:
        result, error = data.get("result"), data.get("error")
        if not isinstance(result if error is None else error, dict):
            raise ProtocolError(400, INVALID_REQUEST, "A response's result or error is a JSON object.", data["id"])
        return Reply(id=data["id"], result=result, error=error)
    return _message(data)


def _message(data: dict[str, Any]) -> Message:
    id_ = data.get("id")
    if "method" not in data:
        if "result" in data or "error" in data:
            raise ProtocolError(400, INVALID_REQUEST, "This server sends no requests, so it takes no responses.")
        raise ProtocolError(400, INVALID_REQUEST, "A JSON-RPC request names its method.", id_)
    method = data["method"]
    if not isinstance(method, str):
        raise ProtocolError(400, INVALID_REQUEST, "A method name is a string.", id_)
    params = data.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ProtocolError(400, INVALID_PARAMS, "MCP params are a JSON object.", id_)
    return Message(method=method, params=params, id=id_)


def negotiate(requested: str) -> str:
    """The version to answer an initialize with: the client's if this server speaks it, else the latest it does."""
    return requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION


def unsupported_version(requested: str, supported: tuple[str, ...] = SUPPORTED_VERSIONS) -> ProtocolError:
    """400 for an MCP-Protocol-Version header this server (or this session) does not speak."""
    return ProtocolError(400, UNSUPPORTED_PROTOCOL_VERSION,
                         f"Unsupported protocol version {requested!r}; this server speaks {', '.join(supported)}.",
                         data={"supported": list(supported), "requested": requested})


def check_version_header(header: str | None, negotiated: str | None = None) -> None:
    """Refuse (400, -32022) an MCP-Protocol-Version header this server does not speak, or, once a session negotiated
    a revision, one that differs from it. No header passes: a client may leave it out."""
    if header is None:
        return
    if header not in SUPPORTED_VERSIONS:
        raise unsupported_version(header)
    if negotiated is not None and header != negotiated:
        raise unsupported_version(header, (negotiated,))


def serializer(secret: str, salt: str = _SESSION_SALT) -> URLSafeSerializer:
    """What signs and opens session ids: keyed by TOOLGATE_SECRET_KEY, named by `salt` for one kind of session."""
    if not secret:
        raise ProtocolError(500, INTERNAL_ERROR, "The service has no TOOLGATE_SECRET_KEY, so it cannot sign sessions.")
    return URLSafeSerializer(secret, salt=salt)


def signed_payload(secret: str, salt: str, session_id: str) -> dict[str, Any] | None:
    """The payload of a session id this service signed with `salt`, or None (too long, or not signed by us)."""
    if len(session_id) > _MAX_SESSION_ID_CHARS:
        return None
    try:
        payload = serializer(secret, salt).loads(session_id)
    except BadSignature:
        return None
    return payload if isinstance(payload, dict) else None


def issue_session(secret: str, organization_id: int, key_id: str, protocol_version: str) -> str:
    """A new session id: signed, visible ASCII only, and distinct on every initialize (it carries a nonce)."""
    payload = {"o": organization_id, "k": key_id, "v": protocol_version, "n": secrets.token_urlsafe(12)}
    return serializer(secret).dumps(payload)


def open_session(secret: str, session_id: str) -> Session | None:
    """The session a presented id vouches for, or None if this service did not sign it."""
    payload = signed_payload(secret, _SESSION_SALT, session_id)
    if payload is None:
        return None
    organization_id, key_id, version = payload.get("o"), payload.get("k"), payload.get("v")
    if not isinstance(organization_id, int) or not isinstance(key_id, str) or version not in SUPPORTED_VERSIONS:
        return None
    return Session(organization_id=organization_id, key_id=key_id, protocol_version=version)


def origin_of(url: str) -> str:
    """The Web origin of a URL (scheme://host[:port]), lower-cased and without a default port."""
    parts = urlsplit(url)
    scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    if not scheme or not host:
        raise ValueError(f"{url!r} has no origin")
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" if port is None or port == default else f"{scheme}://{host}:{port}"


def origin_allowed(origin: str | None, allowed: str) -> bool:
    """Whether a request's Origin header may reach the server (the MCP transport's DNS-rebinding rule).

    No header passes: MCP clients are programs and send none, and a DNS-rebinding attack needs a browser, which
    always sends one. A header passes only when it is the service's own public origin.
    """
    if origin is None:
        return True
    try:
        return origin_of(origin) == allowed
    except ValueError:
        return False
