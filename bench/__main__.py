"""`python -m bench` (`make bench`): every benchmark, one after another, then bench/RESULTS.md.

Each benchmark runs as its own process (so none inherits another's pools, memory or gevent state) and
hands back its report as JSON; this writes them all, with the machine and a summary of the goals.

    python -m bench [--only step_fanout,cap] [--results bench/RESULTS.md]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import PYTHON, ROOT, machine, table, verdict

BENCHMARKS = ("step_fanout", "call_overhead", "instructions", "cap", "registry", "importing", "import_bomb", "load",
              "database_stall", "slow_clients", "peer", "mcp_call", "tracing_cost", "registration",
              "shaping", "scale")
#: No benchmark may run longer than this (the peer's first install included).
BENCHMARK_SECONDS = 1_800
#: Those that may run longer: scale writes 10M call records on each engine and purges them (44 minutes at 1M
#: before issue 38's paging, on a loaded machine; each of its parts bounds itself, see its --longest and --purge-limit).
LONGER_SECONDS = {"scale": 4 * 3_600}


def run_one(name: str) -> dict:
    """Run `python -m bench.<name>`, echoing its output; its report, or a stand-in saying it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.json"
        load = os.getloadavg()[0]
        started = time.monotonic()
        try:
            done = subprocess.run([PYTHON, "-m", f"bench.{name}", "--json", str(out)], cwd=ROOT,
                                  timeout=LONGER_SECONDS.get(name, BENCHMARK_SECONDS), check=False)
            code = done.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
        if out.exists():
            report = json.loads(out.read_text())
            report.update(seconds=time.monotonic() - started, load=load)
            return report
    return {"name": name, "title": name, "command": f"python -m bench.{name}", "tables": [], "goals": [],
            "notes": [f"The benchmark did not finish (exit {code})."], "seconds": time.monotonic() - started,
            "load": load}


def render(reports: list[dict], facts: dict[str, str]) -> str:
    goals = [(verdict(g["met"]), g["goal"], g["measured"], g.get("limit", ""), r["name"], f"{r['load']:.2f}")
             for r in reports for g in r["goals"]]
    lines = [
        "# Benchmark results", "",
        "Written by `make bench` (`python -m bench`); each section says how to rerun it alone.", "",
        table(["", ""], [[k, v] for k, v in facts.items()]), "",
        "The load generator (aiohttp in the benchmark process), the platform and the endpoint share these cores, "
        "so every figure includes their contention, and a machine busy with other work inflates CPU times too "
        "(the load average each benchmark started at is given with it); ratios within one run are what most goals "
        "compare.", "",
        "## Goals", "",
        table(["verdict", "goal", "measured", "what limits it", "benchmark", "load avg at its start"], goals), "",
    ]
    for report in reports:
        lines += [f"## {report['title']}", "",
                  f"`{report['command']}`  ({report['seconds']:.0f} s; 1-minute load average at its start "
                  f"{report['load']:.2f})", ""]
        for block in report["tables"]:
            lines += [block, ""]
        lines += [f"- {note}" for note in report["notes"]] + [""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="comma-separated benchmark names")
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "RESULTS.md")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = set(names) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmarks: {', '.join(sorted(unknown))}")
    facts = {**machine(), "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
             "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    reports = [run_one(name) for name in names]
    args.results.write_text(render(reports, facts))
    print(f"wrote {args.results}")
    return 0 if all(r["tables"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
