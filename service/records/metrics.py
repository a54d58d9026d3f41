"""The service's Prometheus metrics, in one registry of their own, and their text exposition.

Buckets derive from the spec's numbers: call latency up to the ten-second deadline (a timed-out call lands past the
last bucket, in +Inf), response sizes up to the 16,384-character cap, step sizes up to the most calls a step may ask
for. Label values are bounded: a tool the model made up is counted as `(unknown)`, never by the name it invented.
"""
from __future__ import annotations

import os
from typing import Iterable, Mapping

import prometheus_client.values
from gevent import monkey
from prometheus_client import CollectorRegistry, Counter, Histogram, multiprocess
from prometheus_client.exposition import choose_encoder

from service.dispatch.failures import DECLINED, INVALID_ARGUMENTS, UNKNOWN_TOOL
from service.limits import CALL_DEADLINE_SECONDS, MAX_CALLS_PER_STEP, RESPONSE_CAP_CHARS

#: The kind label of a call that succeeded (failures carry their failure kind).
OK = "ok"
#: The tool label of a call to a tool that does not exist.
UNKNOWN = "(unknown)"
SESSION_START, TURN = "session-start", "turn"

LATENCY_BUCKETS = tuple(round(CALL_DEADLINE_SECONDS * f, 6) for f in (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0))
SIZE_BUCKETS = (0, *(RESPONSE_CAP_CHARS // d for d in (1024, 256, 64, 16, 4, 2, 1)))
STEP_SIZE_BUCKETS = tuple(sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, MAX_CALLS_PER_STEP}))
REQUEST_BUCKETS = LATENCY_BUCKETS

# Each value's update takes its lock, a dozen times a step. Under gevent, threading.Lock is gevent's lock, written for
# waiting greenlets (~0.8 µs a use here); an update never yields while it holds the lock, so no greenlet ever waits on
# it, and the thread's own lock (~0.25 µs) guards it as well, against other threads too. Set before any value exists.
prometheus_client.values.Lock = monkey.get_original("threading", "Lock")

REGISTRY = CollectorRegistry(auto_describe=True)

CALLS = Counter("toolgate_calls", 'Tool calls by organization, tool and kind ("ok" when the call succeeded).',
                ["org", "tool", "kind"], registry=REGISTRY)
CALL_SECONDS = Histogram("toolgate_call_duration_seconds", "Time from sending a call to judging its answer.",
                         ["org", "tool"], buckets=LATENCY_BUCKETS, registry=REGISTRY)
RESPONSE_CHARS = Histogram("toolgate_call_response_chars", "Characters in successful responses (never over the cap).",
                           ["org", "tool"], buckets=SIZE_BUCKETS, registry=REGISTRY)
STEP_CALLS = Histogram("toolgate_step_calls", "Calls per step (a model step, or a conversation's session start).",
                       ["org", "phase"], buckets=STEP_SIZE_BUCKETS, registry=REGISTRY)
STEP_SECONDS = Histogram("toolgate_step_duration_seconds", "A step's slowest call: the calls of a step run at once.",
                         ["org", "phase"], buckets=LATENCY_BUCKETS, registry=REGISTRY)
SESSION_START_RUNS = Counter("toolgate_session_start_runs", "Conversations that ran session-start tools.",
                             ["org"], registry=REGISTRY)
REGISTRY_WRITES = Counter("toolgate_registry_writes", "Registry changes, by the audit trail's action names.",
                          ["org", "action"], registry=REGISTRY)
APPROVALS = Counter("toolgate_approvals", "Calls held for the person's approval (status \"pending\", counted as they "
                    "are held) and the person's decisions on them (\"approved\", \"declined\"), by organization and "
                    "tool.", ["org", "tool", "status"], registry=REGISTRY)
HTTP_REQUESTS = Counter("toolgate_http_requests", "HTTP requests answered, by route pattern and status.",
                        ["method", "route", "status"], registry=REGISTRY)
HTTP_SECONDS = Histogram("toolgate_http_request_duration_seconds", "Time to answer an HTTP request.",
                         ["method", "route"], buckets=REQUEST_BUCKETS, registry=REGISTRY)

#: Kinds for which nothing was sent, so there is no latency to observe.
_NOT_SENT = (UNKNOWN_TOOL, INVALID_ARGUMENTS, DECLINED)

#: Each metric's child per label values, as `labels()` returns it, kept so a hot path skips `labels()`'s lock and
#: checks (~2 µs a call, several a step). It holds what the metrics keep anyway: nothing here removes a child.
_children: dict[tuple, object] = {}


def _child(metric, *values: str):
    key = (metric, values)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*values)
    return child


def observe_step(org: str, rows: Iterable[Mapping], *, session_start: bool) -> None:
    """Count one step's calls (the call log's rows): kinds, latencies, sizes, the step's size and time."""
    rows = list(rows)
    if not rows:
        return
    phase = SESSION_START if session_start else TURN
    for row in rows:
        kind = row["kind"] or OK
        tool = UNKNOWN if kind == UNKNOWN_TOOL else row["tool"]
        _child(CALLS, org, tool, kind).inc()
        if kind not in _NOT_SENT:
            _child(CALL_SECONDS, org, tool).observe(row["latency_ms"] / 1000)
        if row["size_chars"] is not None:
            _child(RESPONSE_CHARS, org, tool).observe(row["size_chars"])
    _child(STEP_CALLS, org, phase).observe(len(rows))
    _child(STEP_SECONDS, org, phase).observe(max(row["latency_ms"] for row in rows) / 1000)
    if session_start:
        SESSION_START_RUNS.labels(org).inc()


def approvals(org: str, tool: str, status: str) -> None:
    """Count an approval of `tool` reaching `status`: "pending" as its call is held, then its decision. Labels only:
    an approval's id, its arguments and the session's token never reach the metrics."""
    _child(APPROVALS, org, tool, status).inc()


def registry_write(org: str, action: str) -> None:
    REGISTRY_WRITES.labels(org, action).inc()


def http_request(method: str, route: str, status: int, seconds: float) -> None:
    _child(HTTP_REQUESTS, method, route, str(status)).inc()
    _child(HTTP_SECONDS, method, route).observe(seconds)


#: prometheus_client's own switch: when set (to an empty directory, before any worker starts), every process writes
#: its samples there, and a scrape of any one worker reports the sum over all of them.
MULTIPROCESS_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"


def _collected() -> CollectorRegistry:
    if os.environ.get(MULTIPROCESS_DIRECTORY):
        every_process = CollectorRegistry()
        multiprocess.MultiProcessCollector(every_process)
        return every_process
    return REGISTRY


def exposition(accept: str = "") -> tuple[bytes, str]:
    """Every metric in the format the scraper's Accept header asks for (Prometheus text 0.0.4 by default)."""
    encode, content_type = choose_encoder(accept)
    return encode(_collected()), content_type
