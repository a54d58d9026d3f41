"""The pet store (and the catalogue) the test documents describe, as a real HTTP server on 127.0.0.1 that remembers
every request."""
from __future__ import annotations

import base64
import json
from contextlib import contextmanager
from urllib.parse import parse_qs

from gevent.pywsgi import WSGIServer


class PetStore:
    """A WSGI app serving /v1/pets as petstore.yaml says, and creating /v1/categories as cycles.yaml says;
    `requests` holds what each call carried."""

    def __init__(self) -> None:
        self.pets = {"1": {"id": 1, "name": "Tom", "tag": "cat", "status": "available"},
                     "2": {"id": 2, "name": "Rex", "tag": "dog", "status": "sold"}}
        self.requests: list[dict] = []

    def __call__(self, environ, start_response):
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        seen = {"method": environ["REQUEST_METHOD"], "path": environ["PATH_INFO"],
                "query": parse_qs(environ.get("QUERY_STRING", "")),
                "json": json.loads(body) if body else None,
                "content_type": environ.get("CONTENT_TYPE"),
                "claims": _claims(environ.get("HTTP_AUTHORIZATION", ""))}
        self.requests.append(seen)
        status, answer = self.answer(seen)
        start_response(status, [("Content-Type", "application/json")])
        return [json.dumps(answer).encode()]

    def answer(self, seen: dict) -> tuple[str, object]:
        parts = seen["path"].strip("/").split("/")
        if parts == ["v1", "categories"] and seen["method"] == "POST":
            return "201 Created", {"id": 1, **seen["json"]}
        if parts[:2] != ["v1", "pets"]:
            return "404 Not Found", {"error": "no such route"}
        if len(parts) == 2 and seen["method"] == "GET":
            limit = int(seen["query"].get("limit", ["100"])[0])
            status = seen["query"].get("status", [None])[0]
            return "200 OK", [p for p in self.pets.values() if status in (None, p["status"])][:limit]
        if len(parts) == 2 and seen["method"] == "POST":
            pet = {"id": len(self.pets) + 1, **seen["json"]}
            self.pets[str(pet["id"])] = pet
            return "201 Created", pet
        pet = self.pets.get(parts[2]) if len(parts) == 3 else None
        if pet is None:
            return "404 Not Found", {"error": "no such pet"}
        if seen["method"] == "PUT":
            pet.update(seen["json"] or {})
        if seen["method"] == "DELETE":
            del self.pets[parts[2]]
            return "200 OK", {"deleted": pet["id"]}
        return "200 OK", pet


def _claims(authorization: str) -> dict:
    """The assertion's claims, read without verifying (the mock backend's verifier is tested on its own)."""
    token = authorization.removeprefix("Bearer ")
    payload = token.split(".")[1] if token.count(".") == 2 else ""
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))) if payload else {}


@contextmanager
def pet_store():
    """A running pet store; yields (its base URL, the app)."""
    app = PetStore()
    server = WSGIServer(("127.0.0.1", 0), app, log=None)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", app
    finally:
        server.stop(timeout=1)
