"""A database that stops answering: the latency of requests while PostgreSQL's network is frozen, before and after
every wait on the database got a deadline (TOOLGATE_DATABASE_TIMEOUT_SECONDS, issue 30 point 6).

`toolgate serve` (one process) reaches PostgreSQL through the test suite's TCP proxy (bench/stall_proxy.py), which
the benchmark freezes for `--freeze` seconds: every byte held both ways, every socket open, as a network that drops
everything. A first wave of `--requests` requests (reads `GET /v1/tools` and writes `POST /v1/tools`, half each)
is sent as the freeze begins, a second halfway through it, a third once the service answers again. After the thaw:
how long until a request is answered 200 again, and whether every write answered 201 is in the database. "before"
is the source tree at BEFORE_COMMIT, run side by side; "after" is this tree with the default deadline (or
`--timeout`). All traffic stays on 127.0.0.1.

    python -m bench.database_stall [--freeze 20] [--requests 20] [--timeout 5] [--skip-before]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit, urlunsplit

import requests

from bench.common import (
    POSTGRES_URL,
    PYTHON,
    Platform,
    Report,
    child,
    json_arg,
    median,
    platform,
    postgres_schema,
    shared_tool,
    source_at,
    table,
)

COMMAND = "python -m bench.database_stall"
#: The last commit before the deadline: its service waits on a stalled database for as long as the stall lasts.
BEFORE_COMMIT = "6b73278"
#: The freeze the issue measured (a 20 s pause gave 20.1 s requests), and the bounds a run may choose within.
FREEZE_SECONDS = 20.0
MIN_FREEZE_SECONDS, MAX_FREEZE_SECONDS = 1.0, 120.0
REQUESTS = 20
MAX_REQUESTS = 100
#: The service's default deadline (service.limits.DATABASE_TIMEOUT_SECONDS; the benchmark runs it as a process).
TIMEOUT_SECONDS = 5.0
#: The goals: a request during the stall answers within the deadline and this; the service answers again this soon.
ANSWER_MARGIN_SECONDS = 0.5
RECOVERY_SECONDS = 1.0


@contextlib.contextmanager
def frozen_proxy() -> Iterator[tuple[int, int]]:
    """The freezable proxy in front of the benchmark's PostgreSQL; yields (its port, its pid)."""
    target = urlsplit(POSTGRES_URL)
    args = [PYTHON, "-m", "bench.stall_proxy", target.hostname or "127.0.0.1", str(target.port or 5432)]
    with child(args) as (process, line):
        yield int(line.split()[1]), process.pid


def through(url: str, port: int) -> str:
    """`url` pointed at the proxy on 127.0.0.1:`port`."""
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{port}"))


def send(running: Platform, i: int, patience: float) -> tuple[str, float]:
    """One request (even: a read, odd: a write); (its outcome, seconds)."""
    started = time.monotonic()
    try:
        if i % 2:
            response = running.api("POST", "/v1/tools", json=shared_tool(f"stall_{i}", "https://api.example.com/x"),
                                   timeout=patience)
        else:
            response = running.api("GET", "/v1/tools", timeout=patience)
    except requests.RequestException as error:
        return f"no answer ({type(error).__name__})", time.monotonic() - started
    outcome = str(response.status_code)
    if response.status_code >= 400:
        outcome += f" {response.json().get('code', '')}"
    return outcome, time.monotonic() - started


def measure(running: Platform, proxy_pid: int, freeze: float, count: int) -> dict:
    """Freeze, send the two waves, thaw; then the recovery and the writes kept."""
    for _ in range(3):  # a warm pool: its connections open before the freeze, as in a service that has been serving
        running.expect(200, "GET", "/v1/tools")
    patience = freeze + 60.0
    waves: dict[str, list] = {}
    with ThreadPoolExecutor(max_workers=2 * count) as pool:
        os.kill(proxy_pid, signal.SIGUSR1)
        frozen_at = time.monotonic()
        first = [pool.submit(send, running, i, patience) for i in range(count)]
        time.sleep(freeze / 2)
        second = [pool.submit(send, running, count + i, patience) for i in range(count)]
        time.sleep(max(0.0, frozen_at + freeze - time.monotonic()))
        os.kill(proxy_pid, signal.SIGUSR2)
        thawed_at = time.monotonic()
        recovered = None
        while recovered is None and time.monotonic() - thawed_at < 60:
            with contextlib.suppress(requests.RequestException):
                if running.api("GET", "/v1/tools", timeout=60).status_code == 200:
                    recovered = time.monotonic() - thawed_at
        waves["as the freeze begins"] = [f.result() for f in first]
        waves[f"{freeze / 2:g} s into it"] = [f.result() for f in second]
        third = [pool.submit(send, running, 2 * count + i, patience) for i in range(count)]
        waves["after the thaw"] = [f.result() for f in third]
    listed = {t["name"] for t in running.expect(200, "GET", "/v1/tools")["tools"]}
    written = [i for i in range(3 * count) if i % 2]
    answers = dict(enumerate(answer for wave in waves.values() for answer in wave))
    acknowledged = {f"stall_{i}" for i in written if answers[i][0].startswith("201")}
    return {"waves": waves, "recovered": recovered, "acknowledged": len(acknowledged),
            "kept": len(acknowledged & listed)}


def run_one(label: str, root: Path, freeze: float, count: int, tmp: Path, timeout: float) -> dict:
    os.environ["TOOLGATE_DATABASE_TIMEOUT_SECONDS"] = f"{timeout:g}"  # the tree before the change ignores it
    with frozen_proxy() as (port, proxy_pid), postgres_schema(POSTGRES_URL, prefix="bench_stall") as url, \
            platform(tmp / label, database_url=through(url, port), root=root) as running:
        return measure(running, proxy_pid, freeze, count)


def rows_of(label: str, outcome: dict) -> list[list[str]]:
    rows = []
    for wave, answers in outcome["waves"].items():
        seconds = [s for _, s in answers]
        statuses = ", ".join(f"{n} × {status}" for status, n in sorted(Counter(o for o, _ in answers).items()))
        rows.append([label, wave, statuses, f"{median(seconds):.2f} s", f"{max(seconds):.2f} s"])
    return rows


def run(freeze: float, count: int, timeout: float, skip_before: bool) -> Report:
    command = f"{COMMAND} --freeze {freeze:g} --requests {count} --timeout {timeout:g}" + (
        " --skip-before" if skip_before else "")
    report = Report("database_stall", f"A database that stops answering: requests during a {freeze:g} s freeze",
                    command)
    outcomes: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if not skip_before:
            with source_at(BEFORE_COMMIT) as before:
                if before is None:
                    report.notes.append(f"The tree at {BEFORE_COMMIT} could not be had from git: no 'before' run.")
                else:
                    outcomes[f"before ({BEFORE_COMMIT})"] = run_one("before", before, freeze, count, Path(tmp),
                                                                    timeout)
        outcomes[f"after (deadline {timeout:g} s)"] = run_one("after", Path(__file__).resolve().parent.parent,
                                                               freeze, count, Path(tmp), timeout)
    rows = [row for label, outcome in outcomes.items() for row in rows_of(label, outcome)]
    report.tables.append(table(["service", "requests sent", "answers", "median", "slowest"], rows))
    recovery = [[label, "never (60 s)" if o["recovered"] is None else f"{o['recovered'] * 1000:.0f} ms",
                 f"{o['kept']} of {o['acknowledged']}"] for label, o in outcomes.items()]
    report.tables.append(table(["service", "first 200 after the thaw", "writes answered 201 and kept"], recovery))
    after = outcomes[f"after (deadline {timeout:g} s)"]
    during = [answer for wave, answers in after["waves"].items() if wave != "after the thaw" for answer in answers]
    slowest = max(s for _, s in during)
    refused = all(o.startswith("503 database-unavailable") for o, _ in during)
    report.goal(f"every request during the stall answers 503 database-unavailable within the deadline "
                f"(+{ANSWER_MARGIN_SECONDS:g} s)", f"slowest {slowest:.2f} s, all 503 database-unavailable: {refused}",
                refused and slowest <= timeout + ANSWER_MARGIN_SECONDS)
    report.goal(f"answers again within {RECOVERY_SECONDS:g} s of the thaw",
                "never" if after["recovered"] is None else f"{after['recovered'] * 1000:.0f} ms",
                after["recovered"] is not None and after["recovered"] < RECOVERY_SECONDS)
    report.goal("every write answered 201 is kept", f"{after['kept']} of {after['acknowledged']}",
                after["kept"] == after["acknowledged"])
    report.notes += [
        "Answers: each request's status and error code, or 'no answer' if the client gave up (freeze + 60 s).",
        "Before the change, nothing bounded a wait on the database: the requests that got one of the work gate's 16 "
        "places wait out the freeze and are then answered as if nothing had happened, and the rest are refused `busy` "
        "after 5 s. After it, the requests caught by the stall's start answer 503 at the "
        "deadline; later ones are refused at once while the process asks the database itself, every half second.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--freeze", type=float, default=FREEZE_SECONDS,
                        help=f"seconds the network stays frozen ({MIN_FREEZE_SECONDS:g} to {MAX_FREEZE_SECONDS:g})")
    parser.add_argument("--requests", type=int, default=REQUESTS, help=f"requests per wave (1 to {MAX_REQUESTS})")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_SECONDS,
                        help="TOOLGATE_DATABASE_TIMEOUT_SECONDS for the 'after' service")
    parser.add_argument("--skip-before", action="store_true", help="skip the run of the tree before the change")
    parsed = parser.parse_args(args)
    if not MIN_FREEZE_SECONDS <= parsed.freeze <= MAX_FREEZE_SECONDS:
        parser.error(f"--freeze must be between {MIN_FREEZE_SECONDS:g} and {MAX_FREEZE_SECONDS:g} seconds")
    if not 1 <= parsed.requests <= MAX_REQUESTS:
        parser.error(f"--requests must be between 1 and {MAX_REQUESTS}")
    run(parsed.freeze, parsed.requests, parsed.timeout, parsed.skip_before).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
