"""A document bomb against the import, before and after issue 30's bounds: time to answer, CPU and memory burnt.

The document (tests/importing/bombs.py, which the tests share) is a few kilobytes whose schemas each `allOf` four
`$ref`s to the next, 10, 11 and 16 levels deep. Each row runs a fresh `toolgate serve` on SQLite: the source tree
before the change (`BEFORE_COMMIT`, run from `git archive`) and this one. The client gives up after
`CLIENT_SECONDS`; the server's CPU is then watched until it settles or `WATCH_SECONDS` have passed since the request
was sent, and the server is stopped. Meanwhile another client asks `GET /v1/tools` every `PROBE_EVERY` seconds: how
long an ordinary request of the same worker takes while the import runs.

    python -m bench.import_bomb [--levels 10,11,16] [--skip-before]
"""
from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests

from bench.common import (
    ROOT,
    Report,
    cpu_seconds,
    json_arg,
    median,
    memory_kib,
    platform,
    reset_peak_memory,
    source_at,
    table,
)
from tests.importing.bombs import allof_chain

COMMAND = "python -m bench.import_bomb"
#: The tree before issue 30's import bounds (the branch point of that work).
BEFORE_COMMIT = "6b73278"
LEVELS = (10, 11, 16)
#: How long the client waits for its answer (the issue's client gave up at 3 s; this one waits longer, so the
#: before tree's 10 levels are seen answering).
CLIENT_SECONDS = 10.0
#: Nothing of one row runs longer than this from the request on: the server is stopped then, however busy.
WATCH_SECONDS = 20.0
#: The server's CPU has settled when it grew less than this in one second.
SETTLED_CPU_SECONDS = 0.05
PROBE_EVERY = 0.1
#: The goal: a bomb is refused 422 `document-too-complex` within this long.
ANSWER_SECONDS = 2.0


def measure(root: Path, levels: int) -> dict[str, Any]:
    """One bomb against a fresh platform of the tree at `root`."""
    text = allof_chain(levels)
    with tempfile.TemporaryDirectory() as tmp, platform(Path(tmp), root=root) as running:
        rss_before = memory_kib(running.pid)
        reset_peak_memory(running.pid)
        cpu_before = cpu_seconds(running.pid)
        probes: list[float] = []
        stop = threading.Event()

        def probe() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                try:
                    running.expect(200, "GET", "/v1/tools")
                    probes.append(time.perf_counter() - started)
                except (requests.RequestException, RuntimeError):
                    probes.append(float("inf"))
                stop.wait(PROBE_EVERY)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        sent = time.monotonic()
        try:
            response = requests.post(running.url + "/v1/tools/import", json={"document": text}, timeout=CLIENT_SECONDS,
                                     headers={"Authorization": f"Bearer {running.admin_key}"})
            answer = f"{response.status_code} {response.json().get('code', '')}".strip()
            answered = time.monotonic() - sent
        except requests.RequestException:
            answer, answered = f"none in {CLIENT_SECONDS:g} s (client gave up)", None
        gave_up = time.monotonic()
        cpu_at_answer = cpu_seconds(running.pid) - cpu_before
        last = cpu_seconds(running.pid)
        while time.monotonic() - sent < WATCH_SECONDS:
            time.sleep(1.0)
            now = cpu_seconds(running.pid)
            if now - last < SETTLED_CPU_SECONDS:
                break
            last = now
        settled = time.monotonic() - sent < WATCH_SECONDS
        stop.set()
        prober.join()
        cpu_total = cpu_seconds(running.pid) - cpu_before
        rss_growth = (memory_kib(running.pid, "VmHWM") - rss_before) / 1024
        return {"levels": levels, "bytes": len(text), "answer": answer, "answered": answered,
                "cpu": cpu_total, "cpu_after_client": cpu_total - cpu_at_answer, "settled": settled,
                "still_burning_at": None if settled else time.monotonic() - gave_up,
                "rss_before": rss_before / 1024, "rss_growth": rss_growth,
                "probe_median": median(probes) if probes else None, "probe_max": max(probes) if probes else None}


def row(tree: str, m: dict[str, Any]) -> list[Any]:
    answered = f"{m['answered']:.2f} s" if m["answered"] is not None else "—"
    cpu = f"{m['cpu']:.1f}" + ("" if m["settled"] else f"+ (still burning, stopped at {WATCH_SECONDS:g} s)")
    finite = m["probe_max"] not in (None, float("inf"))
    probe = f"{m['probe_median'] * 1000:.0f} / {m['probe_max'] * 1000:.0f}" if finite else "failed"
    return [tree, m["levels"], m["bytes"], m["answer"], answered, cpu, f"{m['cpu_after_client']:.1f}",
            f"{m['rss_before']:.0f} → +{m['rss_growth']:.0f}", probe]


def run(levels: tuple[int, ...] = LEVELS, before: bool = True) -> Report:
    report = Report("import_bomb", "A document bomb against the import: allOf of four $refs a level", COMMAND)
    rows: list[list[Any]] = []
    after: list[dict[str, Any]] = []
    if before:
        with source_at(BEFORE_COMMIT) as tree:
            if tree is None:
                report.notes.append(f"The tree at {BEFORE_COMMIT} could not be had from git: no before rows.")
            else:
                rows += [row(f"before ({BEFORE_COMMIT})", measure(tree, n)) for n in levels]
    for n in levels:
        after.append(measure(ROOT, n))
        rows.append(row("after", after[-1]))
    report.tables.append(table(["tree", "levels", "bytes", "answer", "answered after", "server CPU s",
                                "of it after the answer", "RSS MiB (growth)", "GET /v1/tools meanwhile p50 / max ms"],
                               rows))
    worst = max((m["answered"] or float("inf")) for m in after)
    refused = all(m["answer"] == "422 document-too-complex" for m in after)
    report.goal(f"a bomb of {', '.join(map(str, levels))} levels refused 422 document-too-complex < "
                f"{ANSWER_SECONDS:g} s", f"{worst * 1000:.0f} ms" if worst != float("inf") else "no answer",
                refused and worst < ANSWER_SECONDS,
                "each $ref expanded once; the merged required list grows fourfold a level and is counted")
    report.notes += [
        f"A fresh `toolgate serve` (SQLite) per row; the client waits {CLIENT_SECONDS:g} s; server CPU is read from "
        f"/proc until it grows less than {SETTLED_CPU_SECONDS} s in a second or {WATCH_SECONDS:g} s have passed since "
        "the request, when the server is stopped (a before row's thread would have burnt on: 16 levels for hours).",
        "RSS growth is the peak (VmHWM) over the resident size before the request.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default=",".join(map(str, LEVELS)))
    parser.add_argument("--skip-before", action="store_true", help="only this tree")
    options = parser.parse_args(args)
    run(tuple(int(n) for n in options.levels.split(",")), before=not options.skip_before).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
