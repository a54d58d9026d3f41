"""Where a traced one-call step's extra instructions go, piece by piece: callgrind's counts of an in-process loop.

The loop does a one-call step's tracing work through service.tracing, as the server does it: the server span,
`answered`, the `execute_tool` span, `outgoing_headers`, three log lines' ids. Each mode runs in a process of its own
under callgrind (gevent patched, as `toolgate serve` is), counting only STEPS steps and the flush that exports them,
after a warm-up and a flush (so the exporter's first request, and its imports, are not counted):

- off: tracing off (the loop's own work);
- made: the spans made and ended, then dropped;
- queued: made and queued by the batch processor, whose exporter answers at once;
- written: queued and written as OTLP, not sent;
- sent: the whole, sent to a local OTLP/HTTP receiver;
- and the writing alone, of the same spans in batches of 512, by service.tracing.encoding and by the SDK's encoder.

The objects alive before the counting are frozen (`gc.freeze`): see `_child`.

bench/tracing_cost.py gives the verdict, counted in the serving process; this says where a change's instructions go.

    python -m bench.tracing_pieces      (needs valgrind)
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.common import PYTHON, Report, json_arg, table
from bench.instructions import _totals, callgrind, control

STEPS = 400
WARMUP = 20
ENCODED_STEPS = 2048
BATCH = 512
COMMAND = "python -m bench.tracing_pieces"
MODES = ["off", "made", "queued", "written", "sent", "encoding (service.tracing.encoding)", "encoding (the SDK's)"]


def _child(mode: str, sink: str) -> None:
    """One mode's loop, in this process (under callgrind): counting switched on around the counted part only."""
    from gevent import monkey

    monkey.patch_all()
    os.environ.update({"OTEL_EXPORTER_OTLP_ENDPOINT": sink, "OTEL_BSP_SCHEDULE_DELAY": "250000"})
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export import SpanExportResult

    from service import tracing
    from service.tracing.encoding import encode_request

    assert tracing.configure()
    tracer = tracing.state.tracer
    assert tracer is not None
    processor = tracer.processor
    kept: list = []

    class Dropped:
        def on_end(self, span) -> None:
            if mode.startswith("encoding"):
                kept.append(span)

    if mode == "off":
        tracing.state.tracer = None
    elif mode == "made" or mode.startswith("encoding"):
        tracer.processor = Dropped()  # type: ignore[assignment]
    elif mode in ("queued", "written"):
        groups: dict = {}
        processor.exporter.export = (  # type: ignore[attr-defined, method-assign]
            (lambda spans: SpanExportResult.SUCCESS) if mode == "queued"
            else (lambda spans: (encode_request(spans, groups), SpanExportResult.SUCCESS)[1]))
    calls = itertools.count()

    class Outcome:
        http_code, kind = 200, None

    def call() -> Outcome:
        tracing.outgoing_headers()
        tracing.current_ids()
        return Outcome()

    def step(environ: dict, start_response) -> list[bytes]:
        tracing.answered("POST", "/v1/conversations/<conversation_id>/steps")
        tracing.current_ids()
        tracing.tool_call(call, "fast", f"call_{next(calls)}", "conv_bench", "127.0.0.1", False)()
        start_response("200 OK", [])
        tracing.current_ids()
        return [b""]

    app = tracing.traced_wsgi(step)

    def steps(count: int) -> None:
        for _ in range(count):
            app({"REQUEST_METHOD": "POST"}, lambda status, headers, exc_info=None: None)

    steps(WARMUP)
    tracing.flush()
    # The objects made so far are out of the collector's way: a full collection, which walks the whole heap, lands in
    # a window of a few hundred steps or not as thresholds fall (58k a step in "queued" when it did), where a long-
    # running server spreads it over many thousands.
    gc.collect()
    gc.freeze()
    if mode.startswith("encoding"):
        kept.clear()
        steps(ENCODED_STEPS)
        sdk = "SDK" in mode
        encode_spans(kept[:2]).SerializePartialToString() if sdk else encode_request(kept[:2], {})  # imports done
        control(os.getpid(), "-i", "on")
        groups = {}
        for at in range(0, len(kept), BATCH):
            batch = kept[at:at + BATCH]
            encode_spans(batch).SerializePartialToString() if sdk else encode_request(batch, groups)
        control(os.getpid(), "-i", "off")
        return
    control(os.getpid(), "-i", "on")
    steps(STEPS)
    tracing.flush()
    control(os.getpid(), "-i", "off")


def counted(mode: str, sink: str, tmp: Path) -> float:
    """Instructions per step of `mode`, in a process of its own under callgrind."""
    out = tmp / f"callgrind.{MODES.index(mode)}"
    subprocess.run([*callgrind(out), PYTHON, "-m", "bench.tracing_pieces", "--mode", mode, "--sink", sink],
                   check=True, capture_output=True, timeout=900, cwd=Path(__file__).resolve().parent.parent)
    total = sum(_totals(Path(path)) for path in glob.glob(f"{out}*"))
    return total / (ENCODED_STEPS if mode.startswith("encoding") else STEPS)


def run() -> Report:
    from bench.tracing_cost import receiver

    report = Report("tracing_pieces", "Where a traced one-call step's instructions go (in process)", COMMAND)
    if shutil.which("valgrind") is None:
        report.notes.append("Not measured: valgrind is not installed here (`apt-get install valgrind`).")
        return report
    with contextlib.ExitStack() as stack:
        sink = stack.enter_context(receiver())
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        rows = [[mode, f"{counted(mode, sink, tmp) / 1000:,.0f}"] for mode in MODES]
    report.tables.append(table(["mode", "k instructions per step"], rows))
    report.notes.append(f"{STEPS} steps after {WARMUP} warm-up and a flush; the encodings: {ENCODED_STEPS} steps' "
                        f"spans in batches of {BATCH}. A piece's cost is the difference of two rows.")
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # one mode's own process
    parser.add_argument("--sink", help=argparse.SUPPRESS)
    options = parser.parse_args(args)
    if options.mode:
        _child(options.mode, options.sink)
        return 0
    run().emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
