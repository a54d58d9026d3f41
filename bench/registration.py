"""Registering 10,000 tools through the API, and what one registration costs beside 100 and beside 10,000.

Part one times `POST /v1/tools` 10,000 times, one after another, against `toolgate serve` on SQLite, a thousand at a
time, so a step that grows with the number of tools shows as a later thousand slower than the first; it then reads
the first page of `GET /v1/tools` and one deep page. Part two counts the SQL statements one registration sends, in
process (every statement through the database's `execute_sql`), at the 100th and at the 10,000th tool: the same
count is what "no step of registration grows with the number of tools" means.

    python -m bench.registration [--tools 10000] [--before COMMIT]
"""
from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from bench.common import ROOT, SECRET, Report, json_arg, median, platform, source_at, table

TOOLS = 10_000
CHUNK = 1_000
COMMAND = "python -m bench.registration"
#: The issue's goal: 10,000 registrations through the API within a minute.
GOAL_SECONDS = 60.0
#: A later thousand may be this much slower than the first before registration counts as growing.
GROWTH_RATIO = 1.5
PAGE_REPEATS = 20


def definition(i: int) -> dict[str, Any]:
    return {"name": f"tool_{i:06d}", "description": f"Benchmark tool number {i}.", "method": "GET",
            "url": "https://api.example.com/things", "scope": "shared",
            "parameters": [{"name": "q", "type": "string", "location": "query", "required": False}]}


def through_the_api(tools: int, root: Path = ROOT, repeats: int = PAGE_REPEATS) -> tuple[list[float], float, float,
                                                                                      float]:
    """Seconds per thousand registrations, the total, and the median first and deep page of GET /v1/tools, of the
    source tree at `root`."""
    chunks = []
    with tempfile.TemporaryDirectory() as tmp, platform(Path(tmp), root=root) as running:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {running.admin_key}"
        started = time.perf_counter()
        for first in range(0, tools, CHUNK):
            chunk_started = time.perf_counter()
            for i in range(first, min(first + CHUNK, tools)):
                response = session.post(f"{running.url}/v1/tools", json=definition(i))
                if response.status_code != 201:
                    raise RuntimeError(f"{response.status_code} {response.text[:300]}")
            chunks.append(time.perf_counter() - chunk_started)
            print(f"{first + CHUNK} registered, the last thousand in {chunks[-1]:.1f} s", flush=True)
        total = time.perf_counter() - started
        pages = {}
        for label, after in (("first", None), ("deep", definition(tools - 50)["name"])):
            params = {"limit": 100, **({"after": after} if after else {})}
            seconds = []
            for _ in range(repeats):
                page_started = time.perf_counter()
                response = session.get(f"{running.url}/v1/tools", params=params)
                seconds.append(time.perf_counter() - page_started)
                if response.status_code != 200:
                    raise RuntimeError(f"{response.status_code} {response.text[:300]}")
            pages[label] = median(seconds)
    return chunks, total, pages["first"], pages["deep"]


def statements_per_registration(tools: int) -> tuple[int, int, float, float]:
    """Statements sent by the 100th and by the last of `tools` registrations, in process on SQLite, and the seconds
    of the first and of the last thousand there (no HTTP between)."""
    from service import create_app
    from service.config import Config
    from service.database import db
    from service.migrations import migrate
    from service.provisioning import create_organization_with_keys

    with tempfile.TemporaryDirectory() as tmp:
        config = Config(database_url=f"sqlite:///{Path(tmp) / 'count.db'}", secret_key=SECRET)
        from service.database import make_database

        database = make_database(config.database_url, pooled=False)
        with database.connection_context():
            migrate(database)
        app = create_app(config)
        with db.connection_context():
            key = create_organization_with_keys(config, "bench")
        client = app.test_client()
        headers = {"Authorization": f"Bearer {key}"}
        counted: collections.Counter[int] = collections.Counter()
        kind = type(db.obj)
        original = kind.execute_sql
        current = [0]

        def counting(self, sql, params=None, *args, **kwargs):
            counted[current[0]] += 1
            return original(self, sql, params, *args, **kwargs)

        kind.execute_sql = counting
        marks = {}
        try:
            for i in range(tools):
                if i in (0, CHUNK, tools - CHUNK, tools):
                    marks[i] = time.perf_counter()
                current[0] = i + 1
                response = client.post("/v1/tools", json=definition(i), headers=headers)
                if response.status_code != 201:
                    raise RuntimeError(f"{response.status_code} {response.get_data(as_text=True)[:300]}")
            marks[tools] = time.perf_counter()
        finally:
            kind.execute_sql = original
    return counted[100], counted[tools], marks[CHUNK] - marks[0], marks[tools] - marks[tools - CHUNK]


def before(tools: int, commit: str) -> None:
    """The same registrations and pages against the source at `commit` (the tools list then ignored `limit`)."""
    with source_at(commit) as root:
        if root is None:
            raise SystemExit(f"git cannot give the source at {commit}")
        chunks, total, first_page, deep_page = through_the_api(tools, root, repeats=3)
    print(f"at {commit}: {tools:,} registrations {total:.1f} s (first thousand {chunks[0]:.1f} s, last "
          f"{chunks[-1]:.1f} s); GET /v1/tools?limit=100 {first_page * 1000:.0f} ms, ?after=… "
          f"{deep_page * 1000:.0f} ms (median of 3)", flush=True)


def run(tools: int) -> Report:
    report = Report("registration", f"Registering {tools:,} tools through the API", COMMAND)
    chunks, total, first_page, deep_page = through_the_api(tools)
    load_before = os.getloadavg()[0]
    at_100, at_last, first_in_process, last_in_process = statements_per_registration(tools)
    rows = [[f"{i * CHUNK + 1:,}–{min((i + 1) * CHUNK, tools):,}", f"{seconds:.1f}",
             f"{seconds / CHUNK * 1000:.2f}"] for i, seconds in enumerate(chunks)]
    report.tables.append(table(["registrations", "seconds", "ms each"], rows))
    report.tables.append(table(["measure", "figure"], [
        [f"all {tools:,} registrations", f"{total:.1f} s"],
        ["in process, no HTTP: the first thousand / the last", f"{first_in_process:.1f} s / {last_in_process:.1f} s"],
        ["statements of the 100th registration", at_100],
        [f"statements of the {tools:,}th registration", at_last],
        [f"GET /v1/tools first page of 100, beside {tools:,} tools (median of {PAGE_REPEATS})",
         f"{first_page * 1000:.1f} ms"],
        [f"GET /v1/tools?after=… a page near the end (median of {PAGE_REPEATS})", f"{deep_page * 1000:.1f} ms"],
    ]))
    growth = chunks[-1] / chunks[0]
    report.goal(f"{tools:,} registrations through the API < {GOAL_SECONDS:.0f} s", f"{total:.1f} s",
                total < GOAL_SECONDS,
                "per registration, one request's CPU (peewee building its ten statements is near half of it, then "
                "Flask and the audit record) and one SQLite commit; and whatever else the two cores run")
    report.goal(f"the last thousand within {GROWTH_RATIO}× the first", f"{growth:.2f}×", growth < GROWTH_RATIO,
                "nothing of registration reads the organization's other tools")
    report.goal("statements per registration the same at 100 and at the last tool", f"{at_100} and {at_last}",
                at_100 == at_last, "")
    report.notes += ["Client-side times over HTTP on loopback, one request at a time, `toolgate serve` on SQLite.",
                     "Statements counted in process: every `execute_sql` (BEGIN included; the driver's COMMIT is "
                     "not a statement it sees).",
                     f"Load average when the in-process part started: {load_before:.1f} (times move with it)."]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=TOOLS)
    parser.add_argument("--before", metavar="COMMIT", help="measure the source at COMMIT instead (no report)")
    options = parser.parse_args(args)
    if options.before:
        before(options.tools, options.before)
        return 0
    run(options.tools).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
