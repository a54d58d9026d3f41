"""What tracing costs a one-call step: the serving process's CPU with tracing off and on, side by side in one run.

Two `toolgate serve` of this tree on SQLite, calling bench/endpoint.py's `/fast`: one with no OpenTelemetry variable
set (tracing off), one exporting to a local OTLP/HTTP receiver in this process (OTEL_EXPORTER_OTLP_ENDPOINT; the
SDK's batch processor as in production, so its encoding and sending are in the serving process's CPU). Each is
measured in ROUNDS interleaved with the other, so a machine whose load drifts weighs on both alike. Off must be the
platform's figure of bench/call_overhead.py within noise; on, at most GOAL_RATIO more.

    python -m bench.tracing_cost
"""
from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import aiohttp

from bench.call_overhead import Target, through
from bench.common import Report, endpoint, json_arg, median, platform, table

SEQUENTIAL = 1_500
ROUNDS = 5
WARMUP = 100
GOAL_RATIO = 1.15
COMMAND = "python -m bench.tracing_cost"
OFF, ON = "tracing off", "tracing on (OTLP/HTTP to a local receiver)"


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that reads each export and answers it: an empty ExportTraceServiceResponse."""

    received = 0

    def do_POST(self) -> None:  # http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).received += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args) -> None:
        pass


@contextlib.contextmanager
def receiver() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


async def measure(targets: list[Target]) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        for target in targets:
            for _ in range(WARMUP):
                await target.one(session)
        for _ in range(ROUNDS):
            for target in targets:
                count = SEQUENTIAL // ROUNDS
                cpu = target.cpu()
                for _ in range(count):
                    await target.one(session)
                target.cpu_1.append((target.cpu() - cpu) / count)


def run() -> Report:
    report = Report("tracing_cost", "What tracing costs a one-call step (CPU, off and on)", COMMAND)
    with contextlib.ExitStack() as stack:
        base, _pid = stack.enter_context(endpoint())
        sink = stack.enter_context(receiver())
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        tool = f"{base}/fast"
        off = stack.enter_context(platform(tmp, env={"OTEL_TRACES_EXPORTER": "none"}))
        on = stack.enter_context(platform(tmp, env={"OTEL_EXPORTER_OTLP_ENDPOINT": sink,
                                                    "OTEL_SERVICE_NAME": "toolgate-bench"}))
        targets = [through(OFF, off, tool), through(ON, on, tool)]
        asyncio.run(measure(targets))
    cpu_off, cpu_on = (median(t.cpu_1) for t in targets)
    report.tables.append(table(["column", "CPU µs per one-call step (median of rounds)", "each round"], [
        [t.name, f"{median(t.cpu_1) * 1e6:,.0f}", ", ".join(f"{c * 1e6:,.0f}" for c in t.cpu_1)] for t in targets]))
    report.goal(f"tracing on costs at most {GOAL_RATIO - 1:.0%} more CPU a one-call step",
                f"{cpu_on / cpu_off - 1:+.1%} ({cpu_off * 1e6:,.0f} → {cpu_on * 1e6:,.0f} µs)",
                cpu_on <= cpu_off * GOAL_RATIO, "two spans a step (server, execute_tool), batched and encoded in the "
                "serving process")
    report.notes += [
        f"{SEQUENTIAL} sequential one-call steps on each, after {WARMUP} warm-up, in {ROUNDS} interleaved rounds; CPU "
        "is the serving process's (user + system, all its threads: the batch processor's export included).",
        f"The receiver answered {_Sink.received} export requests. Off: no OpenTelemetry variable but "
        "OTEL_TRACES_EXPORTER=none; compare its figure with bench/call_overhead.py's platform column.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    _args, json_path = json_arg(argv)
    run().emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
