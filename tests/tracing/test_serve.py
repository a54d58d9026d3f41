"""Traces under `toolgate serve --workers`: each gunicorn worker builds its own exporter after the fork, and its last
spans leave before it exits (a graceful stop), so the receiver has every request's span, none from the arbiter."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import gevent
import requests

from tests.support.constants import SECRET
from tests.support.databases import migrated_sqlite
from tests.support.otlp import otlp_receiver

TOOLGATE = str(Path(sys.executable).with_name("toolgate"))
REQUESTS = 6


def test_each_worker_exports_its_own_spans_continuing_each_callers_trace(tmp_path):
    database = migrated_sqlite(tmp_path / "serve.db")
    with otlp_receiver() as (endpoint, receiver):
        env = {**os.environ, "TOOLGATE_SECRET_KEY": SECRET, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
               "OTEL_SERVICE_NAME": "toolgate-workers"}
        process = subprocess.Popen([TOOLGATE, "serve", "--port", "0", "--workers", "2", "--database", database],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        try:
            with gevent.Timeout(60):
                line = process.stdout.readline()
            url = line.split()[3]
            callers = [f"{i + 1:016x}" for i in range(REQUESTS)]
            for span_id in callers:
                response = requests.get(f"{url}/healthz", timeout=30, headers={
                    "traceparent": f"00-{'ab' * 16}-{span_id}-01", "Connection": "close"})
                assert response.status_code == 200
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
    servers = [s for s in receiver.spans if s.kind == "server"]
    assert sorted(s.parent_id for s in servers) == callers
    assert {s.trace_id for s in servers} == {"ab" * 16}
    assert {s.name for s in servers} == {"GET /healthz"}
    pids = {s.resource["process.pid"] for s in servers}
    assert pids and process.pid not in pids  # the workers' own exporters, built after the fork
    assert {s.resource["service.name"] for s in servers} == {"toolgate-workers"}
