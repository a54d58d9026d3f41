"""The request and call lines' direct way to the service's handler (service.records.logs): the same JSON as through
logging, a step's lines in one write, and logging itself whenever anything else could see or stop them."""
from __future__ import annotations

import io
import json
import logging

import pytest

from service.records import logs
from tests.support.logs import captured_logs, log_lines

ROWS = [{"conversation_id": "c1", "turn": f"t{n}", "tool": "get_stock", "tool_version": 3, "session_start": False,
         "kind": kind, "http_code": code, "latency_ms": 12, "size_chars": size, "jti": f"j{n}", "approval": None}
        for n, (kind, code, size) in enumerate([(None, 200, 40), ("refused", 404, None), ("timed-out", None, None)])]
REQUEST = {"method": "POST", "route": "/v1/conversations/<c>/turns/<t>/steps", "status": 200, "duration_ms": 1.5}


class CountedWrites(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def alone(monkeypatch) -> CountedWrites:
    """The service's handler alone, as `toolgate serve` has it, writing to a buffer (set in the test itself: pytest
    sets sys.stderr again between a fixture and its test)."""
    logs.configure_logging()
    buffer = CountedWrites()
    monkeypatch.setattr("sys.stderr", buffer)
    # pytest's own handlers sit on the root logger, above the service's: a run without them is what serving is.
    monkeypatch.setattr(logging.getLogger(logs.ROOT_LOGGER), "propagate", False)
    return buffer


def log_both() -> None:
    token = logs.request_id.set("req-7")
    try:
        logs.log_calls("acme", ROWS)
        logs.log_request(REQUEST)
    finally:
        logs.request_id.reset(token)


def without_time(lines: list[dict]) -> list[dict]:
    return [{k: v for k, v in line.items() if k != "ts"} for line in lines]


def test_with_the_service_handler_alone_the_lines_skip_logging_and_a_steps_lines_are_one_write(monkeypatch):
    stderr = alone(monkeypatch)
    for name in (logs.CALL_LOGGER, logs.REQUEST_LOGGER):
        monkeypatch.setattr(logging.getLogger(name), "handle", lambda record: pytest.fail("went through logging"))
    log_both()
    direct = log_lines(stderr)
    assert stderr.writes == 2  # the step's three call lines together, then the request's
    monkeypatch.undo()
    with captured_logs() as logged:  # another handler: every line goes through logging, to both
        log_both()
    through_logging = log_lines(logged)
    assert [line["logger"] for line in direct] == ["service.call"] * 3 + ["service.request"]
    assert without_time(direct) == without_time(through_logging)
    assert direct[1] | {"ts": None} == {
        "ts": None, "level": "info", "logger": "service.call", "message": "call", "request_id": "req-7",
        "org": "acme", "conversation": "c1", "turn": "t1", "tool": "get_stock", "version": 3, "session_start": False,
        "kind": "refused", "status": 404, "latency_ms": 12, "size_chars": None, "jti": "j1", "approval": None}


def test_a_line_is_the_formatters_own_for_the_same_record():
    formatter = logs.JsonFormatter()
    for created in (1_700_000_000.0, 1_700_000_000.9996, 1_700_000_001.0421):
        record = logging.LogRecord("service.call", logging.INFO, "(unknown file)", 0, "call", (), None)
        record.created, record.msecs = created, int((created - int(created)) * 1000) + 0.0  # as LogRecord sets them
        record.fields = {"org": "acme"}
        assert formatter.line(created, "INFO", "service.call", "call", {"org": "acme"}) == formatter.format(record)
        assert json.loads(formatter.format(record))["ts"].endswith(f".{int(record.msecs):03d}Z")


def _filtered(monkeypatch) -> None:
    for name in (logs.CALL_LOGGER, logs.REQUEST_LOGGER):
        monkeypatch.setattr(logging.getLogger(name), "filters", [lambda record: False])


def _quiet_service(monkeypatch) -> None:
    service = logging.getLogger(logs.ROOT_LOGGER)
    monkeypatch.setattr(service, "level", service.level)  # restored at the end, with setLevel's cache cleared below
    service.setLevel(logging.WARNING)


def _quiet_handler(monkeypatch) -> None:
    handler = next(h for h in logging.getLogger(logs.ROOT_LOGGER).handlers if type(h) is logs._StderrHandler)
    monkeypatch.setattr(handler, "level", logging.WARNING)


def _disabled(monkeypatch) -> None:
    for name in (logs.CALL_LOGGER, logs.REQUEST_LOGGER):
        monkeypatch.setattr(logging.getLogger(name), "disabled", True)


@pytest.mark.parametrize("stop", [_filtered, _quiet_service, _quiet_handler, _disabled])
def test_a_filter_a_level_or_a_disabled_logger_still_stops_the_lines(monkeypatch, stop):
    stderr = alone(monkeypatch)
    stop(monkeypatch)
    try:
        log_both()
    finally:
        monkeypatch.undo()
        logging.getLogger().manager._clear_cache()  # levels are cached per logger; setLevel clears them, undo does not
    assert stderr.getvalue() == ""


def test_a_handler_anywhere_above_gets_the_lines_as_well(monkeypatch):
    stderr = alone(monkeypatch)
    elsewhere = io.StringIO()
    handler = logging.StreamHandler(elsewhere)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s %(threadName)s"))
    monkeypatch.setattr(logging.getLogger(logs.ROOT_LOGGER), "propagate", True)
    monkeypatch.setattr(logging.getLogger(), "handlers", [handler])
    log_both()
    assert len(log_lines(stderr)) == 4
    assert [line.split()[:2] for line in elsewhere.getvalue().splitlines()] == [["service.call", "call"]] * 3 + [
        ["service.request", "request"]]
