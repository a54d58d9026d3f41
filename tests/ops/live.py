"""Driving a live service (tests/live.py) against the marker endpoint: publish tools, converse, capture logs."""
from __future__ import annotations

import contextlib
import io
import json
import logging

from service.records.logs import ROOT_LOGGER, JsonFormatter

SUBJECT_IN_PATH = {"name": "subject", "type": "string", "location": "path"}


def tool(name, url, **extra):
    return {"name": name, "description": f"The {name} tool.", "method": "GET", "url": url, "scope": "shared",
            "parameters": [], **extra}


def publish(service, tools, project="shop"):
    assert service.api("POST", "/v1/projects", json={"name": project}).status_code == 201
    for definition in tools:
        response = service.api("POST", "/v1/tools", json=definition)
        assert response.status_code == 201, response.text
    pins = [{"tool": t["name"], "version": "draft"} for t in tools]
    assert service.api("PUT", f"/v1/projects/{project}/draft", json={"pins": pins}).status_code == 200
    assert service.api("POST", f"/v1/projects/{project}/publish").status_code == 201




@contextlib.contextmanager
def captured_logs():
    """Every line the service's loggers write meanwhile, formatted as in production; yields the buffer."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger(ROOT_LOGGER)
    logger.addHandler(handler)
    try:
        yield buffer
    finally:
        logger.removeHandler(handler)


def lines(buffer):
    return [json.loads(line) for line in buffer.getvalue().splitlines()]
