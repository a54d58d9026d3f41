"""What the platform adds to a call on a fast endpoint: latency, CPU, and steps per second under load.

Against the same call made directly with aiohttp (the bare client), in the same run:
- latency: SEQUENTIAL one-call steps through the platform against as many direct GETs, median and p99;
- CPU per call: the platform process's CPU over steps of 1 and of FANOUT calls (building, signing,
  sending, reading, recording included) against the aiohttp process's CPU for the same calls;
- throughput: CLIENTS concurrent clients posting one-call steps for LOAD_SECONDS.
The endpoint is bench/endpoint.py's `/fast` (12 bytes, no assertion check), so the figures are the
platform's, not a verifier's.

    python -m bench.call_overhead [--engines geventhttpclient,urllib3,requests]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.common import (PYTHON, ROOT, Report, cpu_seconds, endpoint, engines_option, json_arg, median, own_cpu_seconds,
                          p99, platform, shared_tool, table)
from bench.engines import DEFERRED, ENGINES, variant

SEQUENTIAL = 1_000
FANOUT = 100
FANOUT_STEPS = 20
CLIENTS = 10
LOAD_SECONDS = 5.0
WARMUP = 100
COMMAND = "python -m bench.call_overhead"
#: What the per-step figures are made of (profiled; outside service/dispatch).
PER_STEP = ("per-step work outside dispatch: Flask and flask-smorest request handling, the conversation and turn "
            "reads (an authorization check each), the call record insert and its commit, a JSON log line and "
            "metrics per call")


async def load(request) -> float:
    """Requests per second that CLIENTS concurrent clients get, each awaiting `request()` in a loop."""
    done, until = 0, time.perf_counter() + LOAD_SECONDS

    async def client() -> None:
        nonlocal done
        while time.perf_counter() < until:
            await request()
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(CLIENTS)))
    return done / (time.perf_counter() - started)


async def direct(url: str) -> dict[str, float]:
    """The bare client: latencies of sequential GETs, and its CPU per call sequentially and in batches."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def get() -> float:
            started = time.perf_counter()
            async with session.get(url) as response:
                await response.read()
            return time.perf_counter() - started

        for _ in range(WARMUP):
            await get()
        cpu = own_cpu_seconds()
        latencies = [await get() for _ in range(SEQUENTIAL)]
        sequential_cpu = (own_cpu_seconds() - cpu) / SEQUENTIAL
        cpu = own_cpu_seconds()
        for _ in range(FANOUT_STEPS):
            await asyncio.gather(*(get() for _ in range(FANOUT)))
        fanout_cpu = (own_cpu_seconds() - cpu) / (FANOUT * FANOUT_STEPS)
        rate = await load(get)
    return {"median": median(latencies), "p99": p99(latencies), "cpu_1": sequential_cpu, "cpu_n": fanout_cpu,
            "rate": rate}


async def through(running, conversation: str, token: str) -> dict[str, float]:
    """The same calls as one-call steps (and FANOUT-call steps) through the platform."""
    headers = {"Authorization": f"Bearer {token}"}
    turn = running.start_turn(token, conversation)
    url = f"{running.url}/v1/conversations/{conversation}/turns/{turn}/steps"
    one = {"calls": [{"id": "0", "name": "fast", "arguments": {}}]}
    many = {"calls": [{"id": str(i), "name": "fast", "arguments": {}} for i in range(FANOUT)]}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def step(body: dict) -> float:
            started = time.perf_counter()
            async with session.post(url, json=body, headers=headers) as response:
                results = (await response.json())["results"]
            if any("error" in r for r in results):
                raise RuntimeError(f"a call failed: {results[0]}")
            return time.perf_counter() - started

        for _ in range(WARMUP):
            await step(one)
        cpu = cpu_seconds(running.pid)
        latencies = [await step(one) for _ in range(SEQUENTIAL)]
        sequential_cpu = (cpu_seconds(running.pid) - cpu) / SEQUENTIAL
        await step(many)
        cpu = cpu_seconds(running.pid)
        for _ in range(FANOUT_STEPS):
            await step(many)
        fanout_cpu = (cpu_seconds(running.pid) - cpu) / (FANOUT * FANOUT_STEPS)
        rate = await load(lambda: step(one))
    return {"median": median(latencies), "p99": p99(latencies), "cpu_1": sequential_cpu, "cpu_n": fanout_cpu,
            "rate": rate}


def dispatch_only(url: str, engine: str) -> dict[str, float]:
    """CPU per call of the dispatch layer alone (bench/dispatch_probe.py, its own process)."""
    done = subprocess.run([PYTHON, "-m", "bench.dispatch_probe", url, "--engine", engine, "--sequential",
                           str(SEQUENTIAL), "--fanout", str(FANOUT), "--steps", str(FANOUT_STEPS)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(engines: list[str]) -> Report:
    report = Report("call_overhead", "Call overhead: one call through the platform against the same call direct",
                    COMMAND + (f" --engines {','.join(engines)}" if engines != list(ENGINES + (DEFERRED,)) else ""))
    with endpoint() as (base, _pid), tempfile.TemporaryDirectory() as tmp:
        bare = asyncio.run(direct(f"{base}/fast"))
        figures, layer = {}, {}
        for engine in engines:
            if engine in ENGINES:
                layer[engine] = dispatch_only(f"{base}/fast", engine)
            client, defer = variant(engine)
            with platform(Path(tmp), engine=client, defer_records=defer) as running:
                running.publish_project("overhead", [shared_tool("fast", f"{base}/fast")])
                token = running.session_token()
                conversation = running.open_conversation(token, "overhead")["id"]
                figures[engine] = asyncio.run(through(running, conversation, token))

    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.2f}"

    def us(seconds: float) -> str:
        return f"{seconds * 1e6:.0f}"

    rows = [["direct (aiohttp)", ms(bare["median"]), ms(bare["p99"]), "-", "-", us(bare["cpu_1"]), us(bare["cpu_n"]),
             f"{bare['rate']:.0f} calls/s"]]
    for engine, f in figures.items():
        rows.append([f"platform ({engine})", ms(f["median"]), ms(f["p99"]), ms(f["median"] - bare["median"]),
                     ms(f["p99"] - bare["p99"]), us(f["cpu_1"]), us(f["cpu_n"]), f"{f['rate']:.0f} steps/s"])
    for engine, f in layer.items():
        rows.append([f"dispatch only ({engine})", "-", "-", "-", "-", us(f["cpu_1"]), us(f["cpu_n"]), "-"])
    report.tables.append(table(
        ["client", "median ms", "p99 ms", "added median ms", "added p99 ms", "CPU/call µs (steps of 1)",
         f"CPU/call µs (steps of {FANOUT})", f"{CLIENTS} concurrent clients"], rows))
    if "geventhttpclient" in figures:
        ours = figures["geventhttpclient"]
        added = ours["median"] - bare["median"]
        report.goal("added latency <= 1 ms (median)", f"{added * 1000:.2f} ms", added <= 0.001,
                    PER_STEP)
        report.goal(f"platform CPU per call <= bare aiohttp's (steps of {FANOUT})",
                    f"{us(ours['cpu_n'])} µs vs {us(bare['cpu_n'])} µs", ours["cpu_n"] <= bare["cpu_n"],
                    "a call record, a log line and metrics per call; the dispatch layer below")
        report.goal(f"dispatch CPU per call (build, sign, send, cap) <= bare aiohttp's (steps of {FANOUT})",
                    f"{us(layer['geventhttpclient']['cpu_n'])} µs vs {us(bare['cpu_n'])} µs",
                    layer["geventhttpclient"]["cpu_n"] <= bare["cpu_n"],
                    "ES256 signing (~50 µs) and gevent's per-socket-operation cost in Python")
        report.goal("platform CPU per call <= bare aiohttp's (steps of 1)",
                    f"{us(ours['cpu_1'])} µs vs {us(bare['cpu_1'])} µs", ours["cpu_1"] <= bare["cpu_1"],
                    PER_STEP)
        report.extra = {"steps_per_second": ours["rate"]}
    report.notes += [
        f"Latency: {SEQUENTIAL} sequential calls each way after {WARMUP} warm-up; kept-alive connections.",
        "Platform CPU is the `toolgate serve` process's user+system time over the run (session token check, "
        "database reads, signing, sending, reading, the call records and logs); aiohttp's is the benchmark "
        "process's own. `dispatch only` is service.dispatch alone (run_step, call_tool, ES256 signing) in a "
        "gevent process of its own: what the platform adds per call once the per-step work is set aside.",
        f"`{DEFERRED}`: the platform with its call records, log lines and metrics written after the answer "
        "(an experiment, bench/platform.py), to show what moving them would buy.",
        f"Throughput: {CLIENTS} asyncio clients in the benchmark process for {LOAD_SECONDS:g} s; the load "
        "generator, the platform and the endpoint share the machine's cores.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    engines_option(parser, ENGINES, DEFERRED)
    options = parser.parse_args(args)
    run([e for e in options.engines.split(",") if e]).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
