"""Documents that are small to send and large to expand: what an import must refuse quickly, not work through.

The tests and `bench/import_bomb.py` share them. Each is valid YAML or JSON within the document's own bounds (size,
values, nesting); what makes it costly is what mapping its operations does with it.
"""
from __future__ import annotations

import json

#: The schemas of an allOf chain each merge this many `$ref`s to the next: fan ** levels expansions unmemoized.
FAN = 4


def _openapi(schemas: dict, body: dict) -> dict:
    return {"openapi": "3.0.3", "info": {"title": "bomb", "version": "1"},
            "servers": [{"url": "https://api.example.com"}],
            "paths": {"/pets": {"post": {"operationId": "addPet", "summary": "Add a pet",
                                         "requestBody": {"content": {"application/json": {"schema": body}}},
                                         "responses": {"201": {"description": "Added"}}}}},
            "components": {"schemas": schemas}}


def _refs(name: str, fan: int) -> dict:
    return {"allOf": [{"$ref": f"#/components/schemas/{name}"}] * fan}


def allof_chain(levels: int, fan: int = FAN) -> str:
    """An OpenAPI document (JSON, 2.3 KB at 11 levels) whose body schema `allOf`s `fan` `$ref`s to a schema that
    does the same to the next, `levels` references deep (16, the most the mapping follows, is allowed), ending in an
    object with a required field: fan ** levels merges, and as many `required` entries, when each use is expanded."""
    schemas: dict = {f"L{i}": _refs(f"L{i + 1}", fan) for i in range(1, levels)}
    schemas[f"L{levels}"] = {"type": "object", "required": ["name"],
                             "properties": {"name": {"type": "string"}, "tag": {"type": "string"}}}
    return json.dumps(_openapi(schemas, _refs("L1", fan)))


def alias_chain(levels: int, fan: int = FAN, required: bool = True) -> str:
    """The same chain in YAML with anchors and aliases instead of `$ref`s: each level an inline `allOf` of `fan`
    aliases of the one below. The document's bound counts aliases at every use, so only chains whose expansion stays
    under it are read at all; mapping them walks every use (without `required`, the merged schema stays small)."""
    leaf = "{type: object, required: [name], properties: {name: {type: string}}}" if required else \
        "{type: object, properties: {name: {type: string}}}"
    lines = ["openapi: 3.0.3", "info: {title: bomb, version: '1'}", "servers: [{url: 'https://api.example.com'}]",
             "x-levels:", f"  - &l0 {leaf}"]
    for i in range(1, levels + 1):
        lines.append(f"  - &l{i} {{allOf: [{', '.join([f'*l{i - 1}'] * fan)}]}}")
    lines += ["paths:", "  /pets:", "    post:", "      operationId: addPet", "      summary: Add a pet",
              f"      requestBody: {{content: {{application/json: {{schema: *l{levels}}}}}}}",
              "      responses: {'201': {description: Added}}"]
    return "\n".join(lines) + "\n"


def ref_fan(operations: int, fields: int, levels: int) -> str:
    """Many operations whose bodies have many fields, each field a `$ref` into an `allOf` chain `levels` deep (fan
    2): work that grows with operations x fields x 2 ** levels when every use is expanded again."""
    schemas: dict = {f"C{i}": {"allOf": [{"$ref": f"#/components/schemas/C{i + 1}"}] * 2, "description": f"c{i}"}
                     for i in range(levels)}
    schemas[f"C{levels}"] = {"type": "string"}
    schemas["Body"] = {"type": "object", "properties": {f"f{j}": {"$ref": "#/components/schemas/C0"}
                                                        for j in range(fields)}}
    document = _openapi(schemas, {"$ref": "#/components/schemas/Body"})
    post = document["paths"].pop("/pets")["post"]
    for i in range(operations):
        document["paths"][f"/r{i}"] = {"post": {**post, "operationId": f"add{i}"}}
    return json.dumps(document)


def deep_nesting(depth: int) -> str:
    """A body schema of inline `allOf`s nested `depth` levels (the document's nesting bound counts every level)."""
    schema: dict = {"type": "object", "properties": {"name": {"type": "string"}}}
    for _ in range(depth):
        schema = {"allOf": [schema]}
    document = _openapi({"Deep": schema}, {"$ref": "#/components/schemas/Deep"})
    return json.dumps(document)
