"""Steps of N parallel calls to an endpoint that answers after one second: the whole platform against a
bare aiohttp client making the same calls, wall time over one second for both.

Through the platform a step is one POST to /v1/conversations/{id}/turns/{turn}/steps: the session
token is checked, every call is built, signed, sent and capped, the calls are recorded. The bare
client is aiohttp with no connection limit (its default of 100 would queue half of a 200-call step).
Both reuse kept-alive connections warmed by one step of the largest size; each figure is the median
of REPEATS steps. The endpoint is bench/endpoint.py, which checks no assertion.

    python -m bench.step_fanout [--engines geventhttpclient,urllib3,requests,deferred-records] [--repeats 3]
"""
from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.common import Report, endpoint, json_arg, median, platform, shared_tool, table
from bench.engines import DEFERRED, ENGINES, variant

SIZES = (1, 10, 100, 200, 500)
SLEEP_SECONDS = 1.0
REPEATS = 3
COMMAND = "python -m bench.step_fanout"


async def bare_step(session: aiohttp.ClientSession, url: str, n: int) -> float:
    """Wall time of n parallel GETs, each read whole."""
    async def one() -> None:
        async with session.get(url) as response:
            await response.read()
            assert response.status == 200

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - started


async def platform_step(session: aiohttp.ClientSession, url: str, token: str, n: int) -> float:
    """Wall time of one step of n calls through the platform; every call must have succeeded."""
    body = {"calls": [{"id": str(i), "name": "sleep_one", "arguments": {}} for i in range(n)]}
    started = time.perf_counter()
    async with session.post(url, json=body, headers={"Authorization": f"Bearer {token}"}) as response:
        results = (await response.json())["results"]
    elapsed = time.perf_counter() - started
    failed = [r for r in results if "error" in r]
    if failed:
        raise RuntimeError(f"{len(failed)} of {n} calls failed, e.g. {failed[0]}")
    return elapsed


async def measure_bare(url: str, repeats: int) -> dict[int, float]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        await bare_step(session, url, max(SIZES))
        return {n: median([await bare_step(session, url, n) for _ in range(repeats)]) for n in SIZES}


async def measure_platform(running, sleep_url: str, repeats: int) -> dict[int, float]:
    running.publish_project("fanout", [shared_tool("sleep_one", sleep_url, "Answers after one second.")])
    token = running.session_token()
    conversation = running.open_conversation(token, "fanout")["id"]
    base = f"{running.url}/v1/conversations/{conversation}/turns"
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        step_url = f"{base}/{running.start_turn(token, conversation)}/steps"
        await platform_step(session, step_url, token, max(SIZES))
        figures = {}
        for n in SIZES:
            walls = []
            for _ in range(repeats):
                step_url = f"{base}/{running.start_turn(token, conversation)}/steps"
                walls.append(await platform_step(session, step_url, token, n))
            figures[n] = median(walls)
        return figures


#: The columns `make bench` runs; the reference engines and the deferred-records experiment are asked for by name.
DEFAULT_ENGINES = ("geventhttpclient",)
#: Steps whose wall time is held to the bare client's.
GOAL_SIZES = (200, 500)


def run(engines: list[str], repeats: int) -> Report:
    report = Report("step_fanout", "Step fan-out: N parallel one-second calls, wall time / 1 s",
                    COMMAND + (f" --engines {','.join(engines)}" if engines != list(DEFAULT_ENGINES) else ""))
    with endpoint() as (base, _pid), tempfile.TemporaryDirectory() as tmp:
        sleep_url = f"{base}/sleep/{SLEEP_SECONDS:g}"
        bare = asyncio.run(measure_bare(sleep_url, repeats))
        through: dict[str, dict[int, float]] = {}
        for engine in engines:
            client, defer = variant(engine)
            with platform(Path(tmp), engine=client, defer_records=defer) as running:
                through[engine] = asyncio.run(measure_platform(running, sleep_url, repeats))
    headers = ["N", "bare aiohttp"] + [f"platform ({e})" for e in engines]
    rows = [[n, f"{bare[n] / SLEEP_SECONDS:.3f}"] + [f"{through[e][n] / SLEEP_SECONDS:.3f}" for e in engines]
            for n in SIZES]
    report.tables.append(table(headers, rows))
    if "geventhttpclient" in through:
        limit = ("the step's CPU around its calls: sending N signed requests one greenlet at a time, then reading, "
                 "recording (one INSERT), logging and answering N results")
        ours = through["geventhttpclient"]
        report.goal("step of 200: wall <= 1.05 s", f"{ours[200]:.3f} s", ours[200] <= 1.05 * SLEEP_SECONDS, limit)
        for n in GOAL_SIZES:
            report.goal(f"step of {n}: no slower than bare aiohttp", f"{ours[n]:.3f} s vs {bare[n]:.3f} s",
                        ours[n] <= bare[n], limit)
    report.notes += [
        f"Median of {repeats} steps per cell, after one warm-up step of {max(SIZES)}; connections kept alive.",
        "Platform: `toolgate serve` (one gevent process, SQLite), call records written once per step, before the "
        f"answer; `--engines` adds the reference clients (bench/engines.py) and `{DEFERRED}`, the experiment of "
        "writing records after the answer (bench/platform.py).",
        "Endpoint, platform and load generator share the machine's cores.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(DEFAULT_ENGINES),
                        help=f"columns: {', '.join(ENGINES + (DEFERRED,))}")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    options = parser.parse_args(args)
    run([e for e in options.engines.split(",") if e], max(1, options.repeats)).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
