"""Definitions to register, an organization with its keys, and a test client presenting an API key."""

import json

from service.config import Config
from service.database import db
from tests.support.constants import NOWHERE


def tool(name: str, url: str = "/x", *, method: str = "GET", scope: str = "shared", parameters=(), **extra) -> dict:
    """A valid definition: a description, `url` (a path is taken on NOWHERE), everything else as given."""
    return {"name": name, "description": f"The {name} tool.", "method": method,
            "url": NOWHERE + url if url.startswith("/") else url, "scope": scope, "parameters": list(parameters),
            **extra}


def gathering_tool(name: str, backend: str, group: str, count: int, wait: float | None = None, **extra) -> dict:
    """A tool on the mock backend whose call answers once `count` calls of `group` are there at the same time, with
    `{"met": true, ...}` (mock_backend.gathering): calls seen to run at once, where timing slow ones cost a second.
    A call left alone answers `met: false` after `wait` seconds (the mock's default when None)."""
    query = "" if wait is None else f"?wait={wait:g}"
    return tool(name, f"{backend}/tools/{name}/together/{group}/{count}{query}", **extra)


def gathered(result: dict) -> tuple[bool, int]:
    """(met, most present) from a gathering tool's result, as the model was handed it."""
    answer = json.loads(result["output"])
    return answer["met"], answer["most_present"]


def make_org(config: Config, slug: str) -> dict[str, str]:
    """An organization with its signing keys and one API key of each role, by role."""
    from service.provisioning import create_organization_with_keys
    from service.registry import create_api_key, get_organization

    with db.connection_context():
        admin = create_organization_with_keys(config, slug)
        organization = get_organization(slug)
        return {"admin": admin, "agent": create_api_key(organization, "agent"),
                "backend": create_api_key(organization, "backend")}


def key_id(key: str) -> str:
    """The public half of an API key (`tgk_<key id>_<secret>`), as records name it."""
    return key.split("_")[1]


class Api:
    """A Flask test client that presents one API key on every call."""

    def __init__(self, client, key: str) -> None:
        self.client, self.key = client, key

    def __call__(self, method: str, path: str, json=None, key: str | None = None, **kwargs):
        headers = {"Authorization": f"Bearer {key or self.key}", **(kwargs.pop("headers", None) or {})}
        return self.client.open(path, method=method, json=json, headers=headers, **kwargs)
