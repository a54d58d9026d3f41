"""What a one-call step costs, against the same call made directly and against the platform before issue 15.

Side by side in one run, on bench/endpoint.py's `/fast` (12 bytes, no assertion check, so the figures are the
platform's and not a verifier's), each measured in ROUNDS interleaved with the others, so a machine whose load
drifts weighs on every column alike:
- direct: aiohttp GETs (the bare client);
- platform: `toolgate serve` of this tree on SQLite;
- records after the answer: the same, with the experiment of writing call records after the answer
  (bench/platform.py), which is what it would buy;
- before: the tree at BEFORE_COMMIT, the same requests;
- PostgreSQL: this tree on PostgreSQL through bench/statements.py, which counts the statements each step sends.
Each gives: the latency of SEQUENTIAL one-call steps (median, p99), the serving process's CPU per one-call step and
per call in steps of FANOUT, and one-call steps per second with CLIENTS concurrent clients.

    python -m bench.call_overhead [--engines urllib3,requests] [--no-before] [--no-postgres]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable
from urllib.parse import urlsplit

import aiohttp

from bench.common import (
    BEFORE_COMMIT,
    POSTGRES_URL,
    PYTHON,
    ROOT,
    Report,
    cpu_seconds,
    endpoint,
    json_arg,
    median,
    own_cpu_seconds,
    p99,
    platform,
    postgres_schema,
    shared_tool,
    source_at,
    table,
)
from bench.statements import StatementCounter

SEQUENTIAL = 1_200
FANOUT = 100
FANOUT_STEPS = 21
CLIENTS = 10
LOAD_SECONDS = 6.0
ROUNDS = 3
WARMUP = 100
COMMAND = "python -m bench.call_overhead"
#: The goals of issue 15.
GOAL_ADDED_MS = 1.0
GOAL_STEP_CPU_US = 600
GOAL_THROUGHPUT_RATIO = 4.0
GOAL_STATEMENTS = 3
#: The one-call steps per second issue 15 measured before its work, for when the tree at BEFORE_COMMIT cannot run.
BEFORE_STEPS_PER_SECOND = 389
PLATFORM, DEFERRED, BEFORE, POSTGRES = "platform", "records after the answer", "before", "PostgreSQL"
#: The signing algorithms measured side by side (RS256, ~1 ms a signature, is there for keys that must be RSA).
ALGORITHMS = ("ES256", "EdDSA")


@dataclass
class Target:
    """One column: how to make one request, how to make a step of FANOUT, and whose CPU to read."""

    name: str
    one: Callable[[aiohttp.ClientSession], Awaitable[None]]
    many: Callable[[aiohttp.ClientSession], Awaitable[None]]
    cpu: Callable[[], float]
    statements: Callable[[], int] | None = None
    latencies: list[float] = field(default_factory=list)
    cpu_1: list[float] = field(default_factory=list)
    cpu_n: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    cpu_loaded: list[float] = field(default_factory=list)
    per_step_statements: list[float] = field(default_factory=list)


def direct(url: str) -> Target:
    async def one(session: aiohttp.ClientSession) -> None:
        async with session.get(url) as response:
            await response.read()

    async def many(session: aiohttp.ClientSession) -> None:
        await asyncio.gather(*(one(session) for _ in range(FANOUT)))

    return Target("direct (aiohttp)", one, many, own_cpu_seconds)


def through(name: str, running, tool_url: str, statements: Callable[[], int] | None = None) -> Target:
    """One-call steps (and steps of FANOUT) of one turn on `running`, every call checked to have succeeded."""
    running.publish_project("overhead", [shared_tool("fast", tool_url)])
    token = running.session_token()
    conversation = running.open_conversation(token, "overhead")["id"]
    url = f"{running.url}/v1/conversations/{conversation}/turns/{running.start_turn(token, conversation)}/steps"
    headers = {"Authorization": f"Bearer {token}"}
    bodies = {n: {"calls": [{"id": str(i), "name": "fast", "arguments": {}} for i in range(n)]} for n in (1, FANOUT)}

    def step(n: int) -> Callable[[aiohttp.ClientSession], Awaitable[None]]:
        async def run(session: aiohttp.ClientSession) -> None:
            async with session.post(url, json=bodies[n], headers=headers) as response:
                results = (await response.json())["results"]
            if len(results) != n or any("error" in r for r in results):
                raise RuntimeError(f"{name}: a call failed: {results[0]}")
        return run

    return Target(name, step(1), step(FANOUT), lambda: cpu_seconds(running.pid), statements)


def optional(targets: list[Target], notes: list[str], name: str, make: Callable[[], Target]) -> None:
    """Add a column that may not be possible here (no git history, no PostgreSQL), saying why when it is not."""
    try:
        targets.append(make())
    except Exception as exc:  # said in the report, and the other columns still run
        notes.append(f"`{name}` not measured: {type(exc).__name__}: {str(exc)[:200]}")


def on_postgres(stack: contextlib.ExitStack, tmp: Path, postgres: str, tool: str) -> Target:
    """This platform on PostgreSQL (a fresh schema), through the statement counter."""
    url = stack.enter_context(postgres_schema(postgres, "bench_overhead"))
    server = urlsplit(postgres)
    counter = stack.enter_context(StatementCounter((server.hostname or "127.0.0.1", server.port or 5432)))
    return through(POSTGRES, stack.enter_context(platform(tmp, database_url=counter.url(url))), tool, counter.total)


async def measure_round(targets: list[Target]) -> None:
    """One round of every measurement, target after target."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        for target in targets:
            count = SEQUENTIAL // ROUNDS
            cpu, statements = target.cpu(), target.statements() if target.statements else 0
            for _ in range(count):
                started = time.perf_counter()
                await target.one(session)
                target.latencies.append(time.perf_counter() - started)
            target.cpu_1.append((target.cpu() - cpu) / count)
            if target.statements:
                target.per_step_statements.append((target.statements() - statements) / count)
            steps = FANOUT_STEPS // ROUNDS
            cpu = target.cpu()
            for _ in range(steps):
                await target.many(session)
            target.cpu_n.append((target.cpu() - cpu) / (steps * FANOUT))
            cpu = target.cpu()
            rate, done = await throughput(session, target)
            target.rates.append(rate)
            target.cpu_loaded.append((target.cpu() - cpu) / done)


async def throughput(session: aiohttp.ClientSession, target: Target) -> tuple[float, int]:
    """(requests per second, requests) CLIENTS concurrent clients get, each awaiting `target.one` in a loop."""
    done, until = 0, time.perf_counter() + LOAD_SECONDS / ROUNDS

    async def client() -> None:
        nonlocal done
        while time.perf_counter() < until:
            await target.one(session)
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(CLIENTS)))
    return done / (time.perf_counter() - started), done


async def warm(targets: list[Target]) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        for target in targets:
            for _ in range(WARMUP):
                await target.one(session)
            await target.many(session)


def dispatch_only(url: str, alg: str) -> dict[str, float]:
    """CPU per call of the dispatch layer alone, signing with `alg` (bench/dispatch_probe.py, its own process)."""
    done = subprocess.run([PYTHON, "-m", "bench.dispatch_probe", url, "--sequential", str(SEQUENTIAL), "--fanout",
                           str(FANOUT), "--steps", str(FANOUT_STEPS), "--alg", alg],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def signature_cpu(alg: str, count: int = 2_000) -> float:
    """CPU seconds of one assertion signature with `alg` (the key parsed once, as the platform keeps it)."""
    from service.keys import generate_signing_key, mint_assertion

    key = generate_signing_key(alg, time.time())
    started = own_cpu_seconds()
    for _ in range(count):
        mint_assertion(key, "http://127.0.0.1/orgs/bench", "fast", "bench-user", False, "turn", time.time())
    return (own_cpu_seconds() - started) / count


def run(engines: list[str], before: bool, postgres: str | None) -> Report:
    report = Report("call_overhead", "Call overhead: a one-call step against the same call direct, and before",
                    COMMAND)
    notes: list[str] = []
    with contextlib.ExitStack() as stack:
        base, _pid = stack.enter_context(endpoint())
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        tool = f"{base}/fast"
        targets = [direct(tool), through(PLATFORM, stack.enter_context(platform(tmp)), tool)]
        targets.append(through(DEFERRED, stack.enter_context(platform(tmp, defer_records=True)), tool))
        for engine in engines:
            targets.append(through(f"platform ({engine})", stack.enter_context(platform(tmp, engine=engine)), tool))
        if before:
            tree = stack.enter_context(source_at(BEFORE_COMMIT))
            if tree is None:
                notes.append(f"The tree at {BEFORE_COMMIT} could not be taken from git here; the before figure is "
                             f"issue 15's ({BEFORE_STEPS_PER_SECOND} steps/s).")
            else:
                optional(targets, notes, BEFORE, lambda: through(BEFORE, stack.enter_context(platform(tmp, root=tree)),
                                                                 tool))
        if postgres:
            optional(targets, notes, POSTGRES, lambda: on_postgres(stack, tmp, postgres, tool))
        asyncio.run(warm(targets))
        for _ in range(ROUNDS):
            asyncio.run(measure_round(targets))
        layers = {alg: dispatch_only(tool, alg) for alg in ALGORITHMS}
    signatures = {alg: signature_cpu(alg) for alg in ALGORITHMS}
    figures = {t.name: t for t in targets}
    table_rows(report, targets, layers, signatures)
    goals(report, figures, layers["ES256"])
    report.notes += notes + [
        f"Latency: {SEQUENTIAL} sequential one-call steps (or GETs) each, after {WARMUP} warm-up, in {ROUNDS} rounds "
        "interleaved with the other columns; kept-alive connections. Added = the column's median (p99) less direct's.",
        "CPU: the serving process's user+system time over those steps (its session check, caches, signing, sending, "
        "reading, the call records, logs and metrics), the median of the rounds; direct's is the benchmark process's "
        f"own for the same GETs. Steps of {FANOUT}: {FANOUT_STEPS} steps, per call. `dispatch only` is "
        "service.dispatch "
        "alone (run_step, call_tool, signing with each algorithm) in a gevent process of its own; `one … assertion` "
        "is minting one call assertion (the key parsed once, as the platform keeps it), in the benchmark process.",
        f"Throughput: {CLIENTS} asyncio clients in the benchmark process, {LOAD_SECONDS:g} s in all, the median of the "
        "rounds; the load generator, the platform and the endpoint share the machine's cores. `CPU µs per one-call "
        f"step, {CLIENTS} clients` is the serving process's CPU over that run per step answered (direct's: the "
        "benchmark process's per GET): what a busy process pays a step, its caches warm and a group commit sometimes "
        "shared, where the sequential figure pays for waking an idle process each step.",
        f"`{DEFERRED}`: an experiment (bench/platform.py), not the platform's behaviour; `{BEFORE}`: the source at "
        f"{BEFORE_COMMIT}, run from a git archive with this run's packages; `{POSTGRES}`: statements counted as they "
        "reach the server (bench/statements.py).",
    ]
    return report


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f}"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def table_rows(report: Report, targets: list[Target], layers: dict[str, dict[str, float]],
               signatures: dict[str, float]) -> None:
    bare = targets[0]
    rows = []
    for t in targets:
        added = "-" if t is bare else f"{ms(median(t.latencies) - median(bare.latencies))} " \
                                      f"({ms(p99(t.latencies) - p99(bare.latencies))})"
        statements = f"{median(t.per_step_statements):.2f}" if t.per_step_statements else "-"
        unit = "calls/s" if t is bare else "steps/s"
        rows.append([t.name, ms(median(t.latencies)), ms(p99(t.latencies)), added, us(median(t.cpu_1)),
                     us(median(t.cpu_loaded)), us(median(t.cpu_n)), f"{median(t.rates):.0f} {unit}", statements])
    for alg, layer in layers.items():
        rows.append([f"dispatch only ({alg})", "-", "-", "-", us(layer["cpu_1"]), "-", us(layer["cpu_n"]), "-", "-"])
    for alg, seconds in signatures.items():
        rows.append([f"one {alg} assertion", "-", "-", "-", us(seconds), "-", us(seconds), "-", "-"])
    report.tables.append(table(
        ["column", "median ms", "p99 ms", "added ms median (p99)", "CPU µs per one-call step",
         f"CPU µs per one-call step, {CLIENTS} clients", f"CPU µs per call, steps of {FANOUT}", f"{CLIENTS} clients",
         "statements per one-call step"], rows))


def goals(report: Report, figures: dict[str, Target], layer: dict[str, float]) -> None:
    bare, ours = figures["direct (aiohttp)"], figures[PLATFORM]
    added = median(ours.latencies) - median(bare.latencies)
    added_p99 = p99(ours.latencies) - p99(bare.latencies)
    report.goal(f"added latency of one call <= {GOAL_ADDED_MS:g} ms (median)",
                f"{added * 1000:.2f} ms (p99 {added_p99 * 1000:.2f} ms)", added <= GOAL_ADDED_MS / 1000,
                "the step's own CPU on its path (below): the call's answer waits for the request's parsing, the "
                "session and turn checks, the signature, and the call record's insert before it is sent back")
    before = figures.get(BEFORE)
    cpu_1 = median(ours.cpu_1)
    context = f"; bare GET {us(median(bare.cpu_1))} µs" + (f"; before {us(median(before.cpu_1))} µs" if before else "")
    # The verdict is the sequential figure's, the stricter: a process woken from idle for each step runs it with cold
    # caches; the same step among others (10 clients) is what a busy process pays, given beside it.
    loaded = f" sequential ({us(median(ours.cpu_loaded))} µs with {CLIENTS} clients)"
    report.goal(f"platform CPU per one-call step <= {GOAL_STEP_CPU_US} µs", f"{us(cpu_1)} µs{loaded}{context}",
                cpu_1 <= GOAL_STEP_CPU_US / 1e6,
                "per step (the route answers without Flask: step_route.py): gevent's HTTP server, an ES256 signature "
                "(~50 µs), the call's send and read, a SQLite insert into a table with 7 indexes (18 writes to the "
                "WAL), two JSON log lines and the metrics; a sequential step wakes the idle process several times "
                "(bench/profiles/)")
    report.goal(f"platform CPU per call <= bare aiohttp's (steps of {FANOUT})",
                f"{us(median(ours.cpu_n))} µs vs {us(median(bare.cpu_n))} µs", median(ours.cpu_n) <= median(bare.cpu_n),
                "per call: an ES256 signature, gevent's socket operations in Python, the call's row, log line and "
                "metrics")
    report.goal(f"dispatch CPU per call (build, sign, send, cap) <= bare aiohttp's (steps of {FANOUT})",
                f"{us(layer['cpu_n'])} µs vs {us(median(bare.cpu_n))} µs", layer["cpu_n"] <= median(bare.cpu_n),
                "ES256 signing (~50 µs) and gevent's per-socket-operation cost in Python")
    rate = median(ours.rates)
    then = median(before.rates) if before else BEFORE_STEPS_PER_SECOND
    source = f"before ({BEFORE_COMMIT}, this run)" if before else "before (issue 15's figure)"
    report.goal(f"one-call steps per second, {CLIENTS} clients >= {GOAL_THROUGHPUT_RATIO:g} x before",
                f"{rate:.0f} vs {then:.0f} {source}: {rate / then:.1f} x", rate >= GOAL_THROUGHPUT_RATIO * then,
                "one process, one core: its CPU per step (above), with the load generator and the endpoint on the "
                "same two cores")
    pg = figures.get(POSTGRES)
    if pg is not None and pg.per_step_statements:
        count = median(pg.per_step_statements)
        report.goal(f"database statements per one-call step on PostgreSQL <= {GOAL_STATEMENTS} (counted)",
                    f"{count:.2f}", count <= GOAL_STATEMENTS, "the call records' INSERT, in autocommit")
    else:
        report.goal(f"database statements per one-call step on PostgreSQL <= {GOAL_STATEMENTS} (counted)",
                    "not measured (see the notes)", None)
    report.extra = {"steps_per_second": rate}


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="", help="reference HTTP clients to add as columns: urllib3,requests")
    parser.add_argument("--no-before", action="store_true", help=f"do not run the tree at {BEFORE_COMMIT}")
    parser.add_argument("--no-postgres", action="store_true", help="do not run on PostgreSQL")
    parser.add_argument("--postgres-url", default=POSTGRES_URL)
    options = parser.parse_args(args)
    engines = [e for e in options.engines.split(",") if e]
    run(engines, not options.no_before, None if options.no_postgres else options.postgres_url).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
