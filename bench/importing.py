"""Importing an OpenAPI document at size: preview and import 500 operations, as JSON and as YAML.

The document is written here: 250 resources, each with a list (query parameters, a header, an enum by `$ref`) and a
create (a path parameter, a JSON body by `$ref` with arrays and a nested object), under one security scheme, so
every operation exercises `$ref` resolution, the rules and the not-carried reports. Figures are client-side times
over HTTP on loopback to `toolgate serve` on SQLite, and the service's own parse of the largest document it reads.

    python -m bench.importing
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.common import Report, json_arg, median, platform, table

OPERATIONS = 500
REPEATS = 5
COMMAND = "python -m bench.importing"
#: The goals: a person previewing or importing a large API in the dashboard waits at most this long.
PREVIEW_SECONDS = 2.0
IMPORT_SECONDS = 3.0


def document(operations: int = OPERATIONS, prefix: str = "") -> dict[str, Any]:
    """An OpenAPI 3.0 document of `operations` operations (two per resource)."""
    paths: dict[str, Any] = {}
    for i in range(operations // 2):
        resource = f"{prefix}r{i:03d}"
        paths[f"/{resource}/items"] = {"get": {
            "operationId": f"list_{resource}", "summary": f"List the items of resource {i}",
            "description": "Items in the order they were made, newest first. " * 3,
            "parameters": [
                {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}},
                {"name": "status", "in": "query", "schema": {"$ref": "#/components/schemas/Status"}},
                {"name": "q", "in": "query", "required": True, "description": "Words to look for",
                 "schema": {"type": "string"}},
                {"$ref": "#/components/parameters/RequestId"}],
            "responses": {"200": {"description": "Items", "content": {"application/json": {
                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}}}}}}}
        paths[f"/{resource}/items/{{itemId}}/notes"] = {"post": {
            "operationId": f"annotate_{resource}", "summary": f"Add a note to an item of resource {i}",
            "parameters": [{"name": "itemId", "in": "path", "required": True, "schema": {"type": "string"}}],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Note"}}}},
            "responses": {"201": {"description": "Added"}}}}
    return {
        "openapi": "3.0.3", "info": {"title": f"Bench {operations}", "version": "1"},
        "servers": [{"url": "https://api.bench.example/v1"}], "security": [{"key": []}], "paths": paths,
        "components": {
            "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
            "parameters": {"RequestId": {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}}},
            "schemas": {
                "Status": {"type": "string", "enum": ["open", "closed", "archived"]},
                "Item": {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}},
                "Note": {"type": "object", "required": ["text"], "properties": {
                    "text": {"type": "string", "description": "What the note says"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "pinned": {"type": "boolean"},
                    "author": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}}


def timed(call, repeats: int = REPEATS) -> list[float]:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return seconds


def run() -> Report:
    from service.importing import read_document
    from service.limits import MAX_IMPORT_DOCUMENT_BYTES

    report = Report("importing", f"Importing an OpenAPI document of {OPERATIONS} operations", COMMAND)
    as_json = json.dumps(document())
    as_yaml = yaml.safe_dump(document(), sort_keys=False)
    rows: list[list[Any]] = []

    def add(label: str, seconds: list[float]) -> None:
        rows.append([label, len(seconds), f"{median(seconds) * 1000:.0f}"])

    with tempfile.TemporaryDirectory() as tmp, platform(Path(tmp)) as running:
        def preview(text: str) -> None:
            answer = running.expect(200, "POST", "/v1/tools/import", json={"document": text})
            ready = sum(op["status"] == "ready" for op in answer["operations"])
            if ready != OPERATIONS:
                raise RuntimeError(f"{ready} of {OPERATIONS} operations ready")

        preview(as_json)  # warm
        previews = {"JSON": timed(lambda: preview(as_json)), "YAML": timed(lambda: preview(as_yaml))}
        add(f"preview, JSON ({len(as_json) // 1024} KiB)", previews["JSON"])
        add(f"preview, YAML ({len(as_yaml) // 1024} KiB)", previews["YAML"])

        imports = []
        for run_number in range(REPEATS):
            text = json.dumps(document(prefix=f"i{run_number}"))
            started = time.perf_counter()
            answer = running.expect(200, "POST", "/v1/tools/import", json={"document": text, "apply": True})
            imports.append(time.perf_counter() - started)
            created = sum(op["status"] == "created" for op in answer["operations"])
            if created != OPERATIONS:
                raise RuntimeError(f"{created} of {OPERATIONS} operations created")
        add(f"import (apply): {OPERATIONS} drafts, one transaction, one audit record", imports)

    # The largest document the service reads, parsed in this process: what one import can cost a worker.
    big_operations = OPERATIONS
    while len(yaml.safe_dump(document(big_operations * 2), sort_keys=False)) < MAX_IMPORT_DOCUMENT_BYTES:
        big_operations *= 2
    big = {"JSON": json.dumps(document(big_operations)), "YAML": yaml.safe_dump(document(big_operations),
                                                                                  sort_keys=False)}
    for kind, text in big.items():
        add(f"read a {len(text) // 1024} KiB {kind} document in-process ({big_operations} operations)",
            timed(lambda text=text: read_document(text), 3))

    report.tables.append(table(["what", "runs", "median ms"], rows))
    worst_preview = max(median(s) for s in previews.values())
    report.goal(f"preview {OPERATIONS} operations < {PREVIEW_SECONDS:g} s", f"{worst_preview * 1000:.0f} ms",
                worst_preview < PREVIEW_SECONDS,
                "YAML: PyYAML's tag resolution and constructor run in Python even over libyaml's scanner; JSON: the "
                "registry's rules, run once per operation")
    report.goal(f"import {OPERATIONS} operations < {IMPORT_SECONDS:g} s", f"{median(imports) * 1000:.0f} ms",
                median(imports) < IMPORT_SECONDS, "two inserts per draft on SQLite, in one transaction")
    report.notes += [
        "Client-side times over HTTP on loopback, one request at a time, `toolgate serve` on SQLite.",
        "Reading and mapping run on a thread of the worker's pool, so its other requests and calls go on meanwhile "
        "(sharing the CPU); the in-process rows say how long the largest document an import accepts "
        "(MAX_IMPORT_DOCUMENT_BYTES) takes to read.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0]).parse_args(args)
    run().emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
