"""Many model steps waiting at once on one worker: N concurrent steps, each one call to a tool that answers
after five seconds, against one `toolgate serve` process (gevent), on SQLite and on PostgreSQL.

For each engine and N a fresh platform (a fresh SQLite file, or a PostgreSQL schema of its own) gets one
tool (bench/endpoint.py's `/sleep/5`), a few session tokens and N conversations with a turn each, made
before the burst and not timed. Then a load generator in a process of its own (`--generate`: aiohttp, no
connection limit) posts the N steps at once, each on its own connection, and sorts every answer; meanwhile
this process asks `/healthz` every HEALTH_INTERVAL on one kept-alive connection of its own, and reads the
platform's peak RSS (VmHWM, reset before the burst) and CPU.

    python -m bench.load [--quick] [--sizes 100,500] [--databases sqlite,postgres] [--postgres-url URL]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import requests

from bench.common import (
    POSTGRES_URL,
    PYTHON,
    ROOT,
    Platform,
    Report,
    cpu_seconds,
    endpoint,
    json_arg,
    machine,
    median,
    memory_kib,
    p99,
    platform,
    postgres_schema,
    reset_peak_memory,
    shared_tool,
    table,
)
from bench.endpoint import FAST_BODY
from service.server import raise_open_files

COMMAND = "python -m bench.load"
SIZES = (100, 500, 1_000, 2_000)
DATABASES = ("sqlite", "postgres")
TOOL_SECONDS = 5.0
#: `--quick`: a smoke check of the whole path in a few seconds.
QUICK_SIZES, QUICK_TOOL_SECONDS, QUICK_DATABASES = (20,), 1.0, ("sqlite",)
#: Session tokens the conversations are spread over, and how many set-up requests run at once (well under
#: the platform's database pool, so the set-up itself never meets the limit the burst measures).
TOKENS = 4
SETUP_THREADS = 8
HEALTH_INTERVAL = 0.05
HEALTH_TIMEOUT = 10.0
#: A step's answer is awaited at most this long (the call deadline is 10 s); the whole burst at most BURST_SECONDS.
STEP_TIMEOUT = 60.0
BURST_SECONDS = STEP_TIMEOUT + 30.0
#: Every process here (this one, and the platform, endpoint and generator it starts) needs a descriptor a connection.
OPEN_FILES = 20_000
EXPECTED_OUTPUT = FAST_BODY.decode()
#: The goals.
GOAL_N = 1_000
GOAL_WALL_SECONDS = 7.0
GOAL_HEALTH_P99_SECONDS = 0.100


# ---------------------------------------------------------------- the load generator (its own process)

async def burst(steps: list[list[str]], body: dict[str, Any]) -> dict[str, Any]:
    """Post every step at once, each on a connection of its own; how each answer went, and the wall time."""
    import aiohttp

    statuses: Counter[int] = Counter()
    retry_after: Counter[int] = Counter()
    other: Counter[str] = Counter()
    bodies: dict[str, str] = {}
    ok = 0
    last_ok = 0.0

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, force_close=True),
                                     timeout=aiohttp.ClientTimeout(total=STEP_TIMEOUT)) as session:
        async def one(url: str, token: str) -> None:
            nonlocal ok, last_ok
            try:
                async with session.post(url, json=body, headers={"Authorization": f"Bearer {token}"}) as response:
                    text = await response.text()
                    status = response.status
                    statuses[status] += 1
                    if "Retry-After" in response.headers:
                        retry_after[status] += 1
            except Exception as error:  # every way a step can fail is counted, by its kind
                other[type(error).__name__] += 1
                return
            if status == 200:
                try:
                    result = json.loads(text)["results"][0]
                except (ValueError, KeyError, IndexError, TypeError):
                    result = {}
                if result.get("output") == EXPECTED_OUTPUT:
                    ok += 1
                    last_ok = time.perf_counter() - started
                else:
                    error = result.get("error")
                    other[f"200 with {error.get('kind') if isinstance(error, dict) else 'an unexpected body'}"] += 1
            else:
                bodies.setdefault(str(status), text[:300])

        print("go", flush=True)
        started = time.perf_counter()
        cpu = time.process_time()
        try:
            await asyncio.wait_for(asyncio.gather(*(one(url, token) for url, token in steps)), BURST_SECONDS)
        except asyncio.TimeoutError:
            other["burst cut off"] += len(steps) - ok - sum(statuses.values()) - sum(other.values())
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
    return {"ok": ok, "statuses": dict(statuses), "retry_after": dict(retry_after), "other": dict(other),
            "bodies": bodies, "wall": wall, "last_ok": last_ok, "cpu": cpu}


def generate() -> int:
    """`--generate`: read {"steps": [[url, token]…], "body"} on stdin, print `go`, the burst, then its outcome."""
    raise_open_files(OPEN_FILES)
    job = json.loads(sys.stdin.read())
    print(json.dumps(asyncio.run(burst(job["steps"], job["body"]))), flush=True)
    return 0


# ---------------------------------------------------------------- the benchmark

@contextlib.contextmanager
def database(engine: str, postgres_url: str) -> Iterator[str | None]:
    """None for SQLite (bench.common.platform makes a fresh file); for PostgreSQL a URL into a fresh schema,
    dropped afterwards."""
    if engine == "sqlite":
        yield None
        return
    with postgres_schema(postgres_url, "bench_load") as url:
        yield url


def prepare(running: Platform, project: str, n: int) -> list[list[str]]:
    """n conversations with a turn each, spread over TOKENS session tokens: [step URL, token] of each."""
    tokens = [running.session_token(subject=f"load-{i}") for i in range(TOKENS)]

    def one(i: int) -> list[str]:
        token = tokens[i % TOKENS]
        conversation = running.open_conversation(token, project)["id"]
        turn = running.start_turn(token, conversation)
        return [f"{running.url}/v1/conversations/{conversation}/turns/{turn}/steps", token]

    with ThreadPoolExecutor(SETUP_THREADS) as pool:
        return list(pool.map(one, range(n)))


def sample_health(url: str, generator: subprocess.Popen, deadline: float) -> dict[str, Any]:
    """Ask /healthz every HEALTH_INTERVAL on one kept-alive connection until the generator has exited."""
    seconds: list[float] = []
    at: list[float] = []  # when each was asked, in seconds since the burst began
    failures: Counter[str] = Counter()
    with requests.Session() as session:
        session.get(url, timeout=HEALTH_TIMEOUT)  # the connection is open before the burst starts
        if generator.stdout.readline().strip() != "go":
            raise RuntimeError("the load generator did not start")
        go = time.perf_counter()
        while generator.poll() is None and time.monotonic() < deadline:
            started = time.perf_counter()
            at.append(started - go)
            try:
                status = session.get(url, timeout=HEALTH_TIMEOUT).status_code
                if status != 200:
                    failures[str(status)] += 1
            except requests.RequestException as error:
                failures[type(error).__name__] += 1
            elapsed = time.perf_counter() - started
            seconds.append(elapsed)
            time.sleep(max(0.0, HEALTH_INTERVAL - elapsed))
    return {"seconds": seconds, "at": at, "failures": dict(failures)}


def measure(running: Platform, steps: list[list[str]]) -> dict[str, Any]:
    """One burst of `steps` from the generator process, with /healthz, RSS and CPU read around it."""
    body = {"calls": [{"id": "0", "name": "slow", "arguments": {}}]}
    rss_before = memory_kib(running.pid)
    reset_peak_memory(running.pid)
    cpu = cpu_seconds(running.pid)
    load = os.getloadavg()[0]
    generator = subprocess.Popen([PYTHON, "-m", "bench.load", "--generate"], cwd=ROOT, text=True,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        generator.stdin.write(json.dumps({"steps": steps, "body": body}))
        generator.stdin.close()
        health = sample_health(f"{running.url}/healthz", generator, time.monotonic() + BURST_SECONDS + 30)
        generator.wait(timeout=BURST_SECONDS + 30)  # its outcome is one short line: the pipe cannot fill
        out = generator.stdout.read()
    finally:
        if generator.poll() is None:
            generator.kill()
            generator.wait()
    if generator.returncode != 0:
        raise RuntimeError(f"the load generator failed (exit {generator.returncode})")
    figures = json.loads(out.strip().splitlines()[-1])
    figures.update(health=health, rss_before_kib=rss_before, peak_kib=memory_kib(running.pid, "VmHWM"),
                   platform_cpu=cpu_seconds(running.pid) - cpu, load=load)
    return figures


def run_engine(engine: str, sizes: tuple[int, ...], tool_seconds: float, postgres_url: str,
               tmp: Path, base: str, figures: dict[int, dict[str, Any]]) -> None:
    """Fill `figures` with each N's burst, one fresh platform each."""
    for n in sizes:
        with database(engine, postgres_url) as url, platform(tmp, database_url=url) as running:
            running.publish_project("load", [shared_tool("slow", f"{base}/sleep/{tool_seconds:g}",
                                                         f"Answers after {tool_seconds:g} s.")])
            steps = prepare(running, "load", n)
            figures[n] = measure(running, steps)
        print(f"{engine} N={n}: {figures[n]['ok']} ok, wall {figures[n]['wall']:.2f} s", file=sys.stderr, flush=True)


def failures(f: dict[str, Any]) -> dict[str, int]:
    """Every answer that was not a success, by kind: `500`, `503 without Retry-After`, `ClientOSError`…"""
    kinds: Counter[str] = Counter(f["other"])
    for status, count in f["statuses"].items():
        if status == "200":
            continue
        with_header = f["retry_after"].get(status, 0)
        if status in ("429", "503"):
            kinds[f"{status} with Retry-After"] += with_header
            kinds[f"{status} without Retry-After"] += count - with_header
        else:
            kinds[status] += count
    return {k: v for k, v in kinds.items() if v}


def fivexx(f: dict[str, Any]) -> int:
    return sum(c for s, c in f["statuses"].items() if s.startswith("5"))


def run(sizes: tuple[int, ...], databases: tuple[str, ...], tool_seconds: float, postgres_url: str,
        command: str) -> Report:
    raise_open_files(OPEN_FILES)
    report = Report("load", f"Load: N concurrent {tool_seconds:g}-second steps on one worker", command)
    started_load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results, skipped = measure_each(sizes, databases, tool_seconds, postgres_url)
    report.tables.append(results_table(results))
    for engine in databases:
        judge(report, engine, results.get(engine, {}))
    note_failures(report, results)
    for engine, why in skipped.items():
        report.notes.append(f"{engine} not measured: {why}")
    facts = machine()
    report.notes += [
        f"Each step: one call to bench/endpoint.py's `/sleep/{tool_seconds:g}` (answers `{EXPECTED_OUTPUT}` after "
        f"{tool_seconds:g} s); succeeded means 200 with that body as the call's output. A fresh `toolgate serve` "
        "(one process, gevent) per database and N; PostgreSQL in a schema of its own, dropped afterwards.",
        f"Set-up (not timed): {TOKENS} session tokens, N conversations with a turn each, {SETUP_THREADS} requests "
        "at a time. The burst: every step posted at once by a load generator in its own process (aiohttp, no "
        f"connection limit, one connection a step, {STEP_TIMEOUT:g} s per answer); wall is from the first post to "
        "the last answer, failures included.",
        f"/healthz: one request every {HEALTH_INTERVAL * 1000:.0f} ms during the burst, from this process on one "
        f"kept-alive connection ({HEALTH_TIMEOUT:g} s timeout; a timeout counts its full wait). Peak RSS: the "
        "platform's VmHWM, reset before the burst; platform and generator CPU: user+system over the burst.",
        f"Measured on {facts['cpu']}, {facts['memory']}, {facts['os']}, Python {facts['python']}; load average at "
        f"start {started_load} (the load avg column: 1-minute, at each burst's start). The generator, the platform "
        "and the endpoint share these cores.",
    ]
    return report


def measure_each(sizes: tuple[int, ...], databases: tuple[str, ...], tool_seconds: float, postgres_url: str,
                 ) -> tuple[dict[str, dict[int, dict[str, Any]]], dict[str, str]]:
    """Every database's figures by N, and why a database other than SQLite could not be measured."""
    results: dict[str, dict[int, dict[str, Any]]] = {}
    skipped: dict[str, str] = {}
    with endpoint() as (base, _pid), tempfile.TemporaryDirectory() as tmp:
        for engine in databases:
            results[engine] = {}
            try:
                run_engine(engine, sizes, tool_seconds, postgres_url, Path(tmp), base, results[engine])
            except Exception as error:  # PostgreSQL missing must not lose SQLite's figures
                if engine == "sqlite" or results[engine]:
                    raise
                del results[engine]
                skipped[engine] = f"{type(error).__name__}: {str(error)[:200]}"
    return results, skipped


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def results_table(results: dict[str, dict[int, dict[str, Any]]]) -> str:
    """One row per database and N."""
    rows = []
    for engine, by_n in results.items():
        for n, f in by_n.items():
            st, ra = f["statuses"], f["retry_after"]
            other = sum(v for k, v in failures(f).items() if not k.startswith(("5", "429")))
            health = f["health"]["seconds"]
            bad_health = sum(f["health"]["failures"].values())
            rows.append([
                engine, n, f["ok"], f"{fivexx(f)} ({st.get('500', 0)})",
                f"{st.get('503', 0)} ({ra.get('503', 0)})", f"{st.get('429', 0)} ({ra.get('429', 0)})", other,
                f"{f['wall']:.2f} ({f['last_ok']:.2f})", f"{ms(median(health))} / {ms(p99(health))}" if health else "-",
                f"{len(health)} ({bad_health})", f"{f['peak_kib'] / 1024:.0f} ({f['rss_before_kib'] / 1024:.0f})",
                f"{f['platform_cpu']:.1f}", f"{f['cpu']:.1f}", f"{f['load']:.2f}"])
    return table(
        ["database", "N", "succeeded", "5xx (500)", "503 (Retry-After)", "429 (Retry-After)", "other failures",
         "wall s (last success)", "/healthz p50 / p99 ms", "/healthz samples (failed)", "peak RSS MiB (before)",
         "platform CPU s", "generator CPU s", "load avg"], rows)


#: Why a goal was missed, when it was.
LIMIT = ("CPU: one core works through a burst's 1,000 arrivals, then its 1,000 answers arriving at once "
         "(1.3-2.3 ms of CPU a step, by the machine's other load), and /healthz waits its turn in gevent's run "
         "queue behind them")


def judge(report: Report, engine: str, by_n: dict[int, dict[str, Any]]) -> None:
    """The goals of one database: the goal N's errors, wall and /healthz; beyond capacity only 503/429."""
    label = "SQLite" if engine == "sqlite" else "PostgreSQL"
    at = by_n.get(GOAL_N)
    if at is None:
        report.goal(f"{label}: {GOAL_N:,} concurrent waiting steps on one worker: 0 errors, wall <= "
                    f"{GOAL_WALL_SECONDS:g} s, /healthz p99 <= {ms(GOAL_HEALTH_P99_SECONDS)} ms", "not run", None)
    else:
        health = at["health"]["seconds"]
        health_p99 = p99(health) if health else float("inf")
        met = (at["ok"] == GOAL_N and at["wall"] <= GOAL_WALL_SECONDS and health_p99 <= GOAL_HEALTH_P99_SECONDS
               and not at["health"]["failures"])
        report.goal(f"{label}: {GOAL_N:,} concurrent waiting steps on one worker: 0 errors, wall <= "
                    f"{GOAL_WALL_SECONDS:g} s, /healthz p99 <= {ms(GOAL_HEALTH_P99_SECONDS)} ms",
                    f"{GOAL_N - at['ok']} errors, wall {at['wall']:.2f} s, /healthz p99 {ms(health_p99)} ms"
                    + (f" ({sum(at['health']['failures'].values())} failed)" if at["health"]["failures"] else ""),
                    met, "" if met else LIMIT)
    if not by_n:
        report.goal(f"{label}: beyond capacity, only 503/429 with Retry-After, never 500", "not run", None)
        return
    wrong, refused = Counter(), Counter()
    for f in by_n.values():
        for kind, count in failures(f).items():
            (refused if kind.endswith("with Retry-After") else wrong)[kind] += count
    goal = f"{label}: beyond capacity, only 503/429 with Retry-After, never 500 (N up to {max(by_n):,})"
    if wrong:
        report.goal(goal, ", ".join(f"{v} {k}" for k, v in wrong.most_common()), False, LIMIT)
    elif refused:
        report.goal(goal, ", ".join(f"{v} {k}" for k, v in refused.most_common()) + ", nothing else", True)
    else:
        report.goal(goal, "every step succeeded: capacity not reached", None)


def note_failures(report: Report, results: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Each run's failures, the goal N's slowest probes, and the first answer of each kind."""
    bodies: dict[str, str] = {}
    for engine, by_n in results.items():
        for n, f in by_n.items():
            kinds = [f"{v} {k}" for k, v in Counter(failures(f)).most_common()]
            kinds += [f"/healthz: {v} {k}" for k, v in Counter(f["health"]["failures"]).most_common()]
            if kinds:
                report.notes.append(f"{engine}, N={n}, failures: " + ", ".join(kinds) + ".")
            slowest = sorted(zip(f["health"]["seconds"], f["health"]["at"]), reverse=True)[:3]
            if n == GOAL_N and slowest:
                report.notes.append(f"{engine}, N={n}: the slowest /healthz answers took " + ", ".join(
                    f"{ms(s)} ms (asked {t:.2f} s into the burst)" for s, t in slowest) + ".")
            for status, text in f["bodies"].items():
                bodies.setdefault(f"{status} `{text[:200].strip()}`", "")
            report.extra[f"{engine}/{n}"] = {**{k: v for k, v in f.items() if k != "health"},
                                             "health_seconds": [round(x, 4) for x in f["health"]["seconds"]],
                                             "health_failures": f["health"]["failures"]}
    report.notes += [f"A step's answer, first of its kind: {b}" for b in bodies]


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    if args == ["--generate"]:
        return generate()
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke check: N={','.join(map(str, QUICK_SIZES))}, a {QUICK_TOOL_SECONDS:g} s tool, "
                             f"{', '.join(QUICK_DATABASES)} only")
    parser.add_argument("--sizes", help=f"comma-separated N (default {','.join(map(str, SIZES))})")
    parser.add_argument("--databases", help=f"comma-separated, of {', '.join(DATABASES)} (default both)")
    parser.add_argument("--postgres-url", default=POSTGRES_URL,
                        help="PostgreSQL to run in (a fresh schema per run; default $TOOLGATE_BENCH_POSTGRES_URL, "
                             "$TOOLGATE_TEST_POSTGRES_URL or the local one)")
    options = parser.parse_args(args)
    sizes = tuple(int(n) for n in options.sizes.split(",")) if options.sizes else \
        QUICK_SIZES if options.quick else SIZES
    databases = tuple(d for d in options.databases.split(",") if d) if options.databases else \
        QUICK_DATABASES if options.quick else DATABASES
    if set(databases) - set(DATABASES) or not sizes or min(sizes) < 1:
        parser.error("unknown database or bad sizes")
    tool_seconds = QUICK_TOOL_SECONDS if options.quick else TOOL_SECONDS
    command = " ".join([COMMAND] + (args if args else []))
    run(sizes, databases, tool_seconds, options.postgres_url, command).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
