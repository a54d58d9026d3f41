"""The documents written for these tests, and an importer over the API (the apps and keys are the root fixtures)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.definitions import Api

DOCUMENTS = Path(__file__).parent / "documents"


def document(name: str) -> str:
    """The text of a document in tests/importing/documents."""
    return (DOCUMENTS / name).read_text()


class Importer:
    """`POST /v1/tools/import` with one key; `preview`/`apply` answer the operations by their "METHOD /path"."""

    def __init__(self, api: Api):
        self.api = api

    def post(self, key: str | None = None, **body):
        return self.api("POST", "/v1/tools/import", json=body, key=key)

    def preview(self, text: str, **options) -> dict[str, dict]:
        response = self.post(document=text, **options)
        assert response.status_code == 200, response.get_json()
        return {op["operation"]: op for op in response.get_json()["operations"]}

    def apply(self, text: str, **options) -> dict[str, dict]:
        return self.preview(text, apply=True, **options)


@pytest.fixture
def importer(api):
    return Importer(api)


def rules(operation: dict, key: str = "errors") -> list[tuple[str, str]]:
    """(field, rule) of each error (or of each part not carried) of one operation."""
    return [(e["field"], e["rule"]) for e in operation[key]]


def written(api: Api) -> tuple[list[str], list[dict]]:
    """The organization's tool names and audit records: what an import may have written."""
    tools = [t["name"] for t in api("GET", "/v1/tools").get_json()["tools"]]
    records = api("GET", "/v1/audit?limit=500").get_json()["records"]
    return tools, [r for r in records if r["object"]["type"] != "api-key"]
