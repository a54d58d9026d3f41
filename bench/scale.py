"""Lists at scale (issue 38): the lists people and programs read, at 1k / 10k / 100k tools and 100k / 1M / 10M call
records, side by side on SQLite and PostgreSQL; registering 10,000 tools through the API; a one-call step beside an
empty log and beside the largest; a purge of the largest log while steps are served.

One `toolgate serve` per engine and part, on a fresh SQLite file or a fresh PostgreSQL schema (dropped after). The
tools and call records are written in bulk by the benchmark straight into the database (bench/scale_rows.py says
which rows), growing one database from each size to the next; registration through the API is timed on a database
of its own. Each list figure is p50 / p95 of sequential requests as the client sees them. Written to the contract's
paged shapes and tolerant of the unpaged ones: an unpaged list simply answers everything.

    python -m bench.scale [--quick] [--engines sqlite,postgres] [--sizes tools=1k,10k,100k calls=100k,1M,10M
                          register=10k]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Iterator

from bench import scale_rows as rows
from bench.common import POSTGRES_URL, Report, endpoint, json_arg, median, platform, postgres_schema
from bench.scale_http import Reader, Sample, Steps, p95, p99_ms, purge_while_serving, sample

COMMAND = "python -m bench.scale"
ENGINES = ("sqlite", "postgres")
FULL = {"tools": [1_000, 10_000, 100_000], "calls": [100_000, 1_000_000, 10_000_000], "register": [10_000]}
QUICK = {"tools": [200, 1_000], "calls": [10_000, 50_000], "register": [300]}
#: The goals of issue 38, and the sizes they are stated at.
LIST_SECONDS, GOAL_TOOLS, GOAL_CALLS = 0.050, 100_000, 10_000_000
REGISTER_SECONDS, GOAL_REGISTER = 60.0, 10_000
STEP_RATIO = 1.10
#: Rounds of the one-call step comparison, alternating between the empty log and the full one.
STEP_ROUNDS = 5
PURGE_P99_SECONDS = 0.250
REGISTER_CLIENTS = 4
PURGE_CLIENTS = 2
LOG_DAYS = 30.0
#: The goals of issue 36: the calls summary and the Calls screen with its charts, at a million records (and ten).
SUMMARY = "`GET /v1/calls/summary`"
SUMMARY_SECONDS, SCREEN_SECONDS, GOAL_SUMMARY_CALLS = 0.200, 0.300, 1_000_000


def parse_sizes(items: list[str], base: dict[str, list[int]]) -> dict[str, list[int]]:
    """`tools=1k,10k calls=1M register=10k` → {"tools": [1000, 10000], …}; parts not given keep `base`'s, and
    `calls=` (nothing) skips that part."""
    sizes = {k: list(v) for k, v in base.items()}
    for item in items:
        kind, equals, values = item.partition("=")
        if kind not in sizes or not equals:
            raise ValueError(f"--sizes takes tools=…, calls=… and register=…, not {item!r}")
        sizes[kind] = sorted(_number(v) for v in values.split(",") if v)
    return sizes


def _number(text: str) -> int:
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    value = int(float(text[:-1] if scale > 1 else text) * scale)
    if value < 1:
        raise ValueError(f"a size must be at least 1, not {text!r}")
    return value


def count(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else (
        f"{n // 1_000}k" if n >= 1_000 and n % 1_000 == 0 else str(n))


def say(text: str) -> None:
    print(f"[scale {time.strftime('%H:%M:%S')}] {text}", flush=True)


@contextlib.contextmanager
def database(engine: str, tmp: Path, name: str) -> Iterator[str | None]:
    """A URL for a fresh database of `engine` (None: SQLite, which `platform` makes itself)."""
    if engine == "sqlite":
        yield f"sqlite:///{tmp / f'{name}.db'}"
    else:
        with postgres_schema(POSTGRES_URL, prefix=f"bench_scale_{name}") as url:
            yield url


class Run:
    def __init__(self, engines: list[str], sizes: dict[str, list[int]], repeats: int, budget: float, steps: int,
                 purge_limit: float, longest: float):
        self.engines, self.sizes, self.repeats, self.budget, self.longest = engines, sizes, repeats, budget, longest
        self.step_count, self.purge_limit = steps, purge_limit
        self.tools: dict[tuple[str, int], dict[str, Sample]] = {}
        self.calls: dict[tuple[str, int], dict[str, Sample]] = {}
        self.writes: list[list[str]] = []
        self.register: list[list[str]] = []
        self.register_seconds: dict[str, float] = {}
        self.step_rows: list[list[str]] = []
        self.step_ratio: dict[str, tuple[float, float]] = {}
        self.purges: dict[str, tuple[int, object]] = {}

    def lists(self, reader: Reader, engine: str, size: int, paths: dict[str, str],
              figures: dict[tuple[str, int], dict[str, Sample]]) -> dict[str, Sample]:
        """Each path timed (`/v1/…` with the API key, others as the person signed in to the dashboard); one whose
        p50 at the engine's previous size, grown in proportion, would pass `longest` seconds is skipped and said so
        (the unpaged lists grow linearly)."""
        previous = max((s for e, s in figures if e == engine), default=None)
        found = {}
        for label, path in paths.items():
            before = figures[(engine, previous)].get(label) if previous else None
            projected = before.p50 * size / previous if before and before.seconds and previous else 0.0
            if projected > self.longest:
                found[label] = Sample(skipped=f"skipped: ~{projected:.0f} s projected")
                say(f"{engine} {size}: {label} skipped, ~{projected:.0f} s projected")
                continue
            get = reader.api if path.startswith("/v1/") else reader.page
            found[label] = sample(lambda: get(path), self.repeats, self.budget)  # noqa: B023 -- called right here
        return found

    # ------------------------------------------------------------ tools

    def tool_lists(self, engine: str, tmp: Path) -> None:
        with database(engine, tmp, "tools") as url, platform(tmp, database_url=url) as running:
            reader, have = Reader(running), 0
            for size in self.sizes["tools"]:
                started = time.perf_counter()
                rows.write_tools(url, "bench", have, size)
                have = size
                self.writes.append([engine, f"{count(size)} tools (with drafts, versions, projects, audit)",
                                    f"{time.perf_counter() - started:.1f} s"])
                say(f"{engine}: {count(size)} tools written; timing the lists")
                half, rare, project = rows.tool_name(size // 2), rows.tool_name(size // 3)[:-1], rows.project_name(1)
                self.tools[(engine, size)] = self.lists(reader, engine, size, {
                    "`GET /v1/tools` (first page)": "/v1/tools",
                    "`GET /v1/tools?after=` a name half way": f"/v1/tools?after={half}",
                    "`GET /v1/tools?q=` a name's start (10 match)": f"/v1/tools?q={rare}",
                    "`GET /v1/tools?project=` (100 tools)": f"/v1/tools?project={project}",
                    "dashboard Tools screen (first page)": "/tools",
                    "`GET /v1/projects`": "/v1/projects",
                    "`GET /v1/audit`": "/v1/audit",
                }, self.tools)

    def registration(self, engine: str, tmp: Path) -> None:
        from concurrent.futures import ThreadPoolExecutor

        import requests

        total = self.sizes["register"][-1]
        with database(engine, tmp, "register") as url, platform(tmp, database_url=url) as running:
            say(f"{engine}: registering {count(total)} tools through the API, {REGISTER_CLIENTS} clients")
            local = __import__("threading").local()

            def register(i: int) -> float:
                session = getattr(local, "session", None) or requests.Session()
                local.session = session
                at = time.perf_counter()
                answer = session.post(running.url + "/v1/tools", json=_registration(i), timeout=120,
                                      headers={"Authorization": f"Bearer {running.admin_key}"})
                if answer.status_code != 201:
                    raise RuntimeError(f"register: {answer.status_code} {answer.text[:200]}")
                return time.perf_counter() - at

            started = time.perf_counter()
            with ThreadPoolExecutor(REGISTER_CLIENTS) as pool:
                seconds = list(pool.map(register, range(total)))
            wall = time.perf_counter() - started
        self.register_seconds[engine] = wall
        self.register.append([engine, f"{total:,}", REGISTER_CLIENTS, f"{wall:.1f} s", f"{median(seconds) * 1000:.1f}",
                              f"{p95(seconds) * 1000:.1f}", f"{total / wall:.0f}"])

    # ------------------------------------------------------------ the call log

    def call_log(self, engine: str, tmp: Path, tool_url: str) -> None:
        sizes = self.sizes["calls"]
        with database(engine, tmp, "calls") as url, platform(tmp / "calls", database_url=url) as running:
            reader, steps, have = Reader(running), Steps(running, tool_url), 0
            for size in sizes:
                started = time.perf_counter()
                last = rows.newest_call_id(url)
                rows.write_calls(url, "bench", have, size, sizes[-1], LOG_DAYS)
                have = size
                self.writes.append([engine, f"{count(size)} call records", f"{time.perf_counter() - started:.1f} s"])
                started = time.perf_counter()
                rows.roll_up(url, last)
                self.writes.append([engine, f"their rollups (as migration 0012 fills them, from {count(size)} "
                                    "records)", f"{time.perf_counter() - started:.1f} s"])
                say(f"{engine}: {count(size)} call records written and rolled up; timing the lists")
                newest = reader.api("/v1/calls?limit=1").json()["calls"][0]["id"]
                half, tool, subject = newest // 2, rows.call_tool(7), rows.call_subject(123)
                day_ago = int(time.time()) - 86_400
                self.calls[(engine, size)] = self.lists(reader, engine, size, {
                    "`GET /v1/calls` (newest page)": "/v1/calls",
                    "`GET /v1/calls?kind=timed-out`": "/v1/calls?kind=timed-out",
                    "`GET /v1/calls?before=` an id half way": f"/v1/calls?before={half}",
                    "`GET /v1/calls?tool=` (1 in 200)": f"/v1/calls?tool={tool}",
                    "`GET /v1/calls?subject=` (1 in 20,000)": f"/v1/calls?subject={subject}",
                    "dashboard Calls screen (with its charts)": "/calls",
                    SUMMARY + " (all 30 days, by day)": "/v1/calls/summary",
                    SUMMARY + " the last day, by hour": f"/v1/calls/summary?since={day_ago}",
                    SUMMARY + "?tool= (all 30 days)": f"/v1/calls/summary?tool={tool}",
                }, self.calls)
            say(f"{engine}: one-call steps beside an empty log and beside {count(sizes[-1])} records")
            self.step_cost(engine, tmp, tool_url, steps, sizes[-1])
            if self.purge_limit > 0:
                say(f"{engine}: purging {count(sizes[-1])} records while serving steps")
                self.purges[engine] = (sizes[-1], purge_while_serving(steps, url, PURGE_CLIENTS, self.purge_limit))

    def step_cost(self, engine: str, tmp: Path, tool_url: str, full: Steps, size: int) -> None:
        """Rounds alternating between a fresh platform (an empty log) and the full one, so drift weighs on both."""
        seconds: dict[str, list[float]] = {"empty": [], "full": []}
        cpu: dict[str, list[float]] = {"empty": [], "full": []}
        with database(engine, tmp, "empty") as url, platform(tmp / "empty", database_url=url) as running:
            empty = Steps(running, tool_url)
            for which in (empty, full):
                which.run(max(10, self.step_count // 10))  # warm
            # The serving process's CPU is read in clock ticks (10 ms): a round of 200 steps of ~0.75 ms is 15 of
            # them, so one tick either way was 7% of a round's figure. The rounds' CPU is summed over all their steps
            # instead (five rounds of three times as many: some 200 ticks a side, half a percent).
            for _ in range(STEP_ROUNDS):
                for name, which in (("empty", empty), ("full", full)):
                    took, per_step = which.run(self.step_count * 3)
                    seconds[name] += took
                    cpu[name].append(per_step)
        for name, label in (("empty", "an empty log"), ("full", f"{count(size)} records")):
            self.step_rows.append([engine, label, len(seconds[name]), f"{median(seconds[name]) * 1000:.2f}",
                                   f"{p99_ms(seconds[name])}", f"{sum(cpu[name]) / len(cpu[name]) * 1e6:.0f}"])
        self.step_ratio[engine] = (median(seconds["full"]) / median(seconds["empty"]),
                                   sum(cpu["full"]) / sum(cpu["empty"]))


def _registration(i: int) -> dict:
    return {"name": f"reg_{i:06d}", "description": f"Registered tool number {i}.", "method": "GET",
            "url": f"https://api.example.com/registered/{i}", "scope": "shared",
            "parameters": [{"name": "q", "type": "string", "location": "query", "required": False}]}


def run(engines: list[str], sizes: dict[str, list[int]], quick: bool, purge_limit: float, longest: float) -> Report:
    from bench.scale_report import fill

    command = COMMAND + (" --quick" if quick else "") + (" --purge-limit 0" if purge_limit <= 0 else "") + \
        f" --engines {','.join(engines)} --sizes " + " ".join(
        f"{kind}={','.join(count(n) for n in values)}" for kind, values in sizes.items())
    measured = Run(engines, sizes, repeats=5 if quick else 20, budget=5.0 if quick else 20.0,
                   steps=50 if quick else 200, purge_limit=purge_limit,
                   longest=longest)
    report = Report("scale", "Lists at scale: tools, the call log, a step beside a big log, a purge while serving",
                    command)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="toolgate-scale-") as tmp, endpoint() as (tool_url, _pid):
        for engine in engines:
            started = time.perf_counter()
            try:
                if sizes["tools"]:
                    measured.tool_lists(engine, Path(tmp))
                if sizes["register"]:
                    measured.registration(engine, Path(tmp))
                if sizes["calls"]:
                    measured.call_log(engine, Path(tmp), f"{tool_url}/fast")
            except Exception as error:  # the other engine still runs; the report says what stopped this one
                report.notes.append(f"{engine}: stopped by {type(error).__name__}: {str(error)[:300]}")
                say(f"{engine}: stopped by {type(error).__name__}: {error}")
            say(f"{engine}: done in {time.perf_counter() - started:.0f} s")
    fill(report, measured)
    report.notes.append(f"1-minute load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
                        f"({os.cpu_count()} cores): every figure includes what else the machine was doing.")
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats: a few minutes")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: sqlite, postgres")
    parser.add_argument("--sizes", nargs="+", default=[], metavar="KIND=N,N",
                        help="tools=1k,10k,100k calls=100k,1M,10M register=10k (an empty list skips that part)")
    parser.add_argument("--purge-limit", type=float, default=1_800.0, help="seconds a purge may run before it "
                        "is stopped (the report then says so); 0 skips the purge")
    parser.add_argument("--longest", type=float, default=None, help="skip a request whose time, grown from the "
                        "size before in proportion, would pass this many seconds (default 150; --quick 10)")
    parsed = parser.parse_args(args)
    if parsed.longest is None:
        parsed.longest = 10.0 if parsed.quick else 150.0
    engines = [e for e in parsed.engines.split(",") if e]
    if not engines or set(engines) - set(ENGINES):
        parser.error(f"--engines takes {', '.join(ENGINES)}")
    try:
        sizes = parse_sizes(parsed.sizes, QUICK if parsed.quick else FULL)
    except ValueError as error:
        parser.error(str(error))
    run(engines, sizes, parsed.quick, parsed.purge_limit, parsed.longest).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
