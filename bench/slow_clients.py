"""Hostile clients of the platform itself (issue 30, points 1 and 2): slow bodies and slowloris heads, against this
tree and the tree before issue 30, side by side.

Three attacks, each held for ATTACK_SECONDS by bench/hostile.py in a process of its own (gevent, raw sockets on
loopback; a connection the platform closes is opened again, so the attacker keeps its number):
- slow bodies: 40 connections each sending a step's head (with a session token) or a dashboard sign-in's (with its
  cookie, no credential), `Content-Length: 100000`, then one byte every BODY_DRIP seconds, against one process;
- slowloris: 1,500 connections each sending a request line, then one header line every HEAD_DRIP seconds, never the
  blank line, against one process;
- slowloris against `--workers 2`: 9,000 such connections.
Meanwhile this process asks, one after another, for `GET /v1/tools` (an admin key) and `/healthz`, each with a
PROBE_TIMEOUT, and reads `/readyz`; an answer that is not a 2xx counts as failed, its time as it came.

    python -m bench.slow_clients [--quick] [--only slow-bodies,slowloris,slowloris-workers] [--no-before]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from bench.common import PYTHON, ROOT, Platform, Report, json_arg, p99, platform, shared_tool, source_at, table

COMMAND = "python -m bench.slow_clients"
#: The tree before issue 30's work, run beside this one.
BEFORE = "6b73278"
ATTACK_SECONDS = 15.0
QUICK_ATTACK_SECONDS = 4.0
BODY_DRIP = 2.0
HEAD_DRIP = 2.0
PROBE_TIMEOUT = 5.0
PROBE_INTERVAL = 0.05
ATTACKS = {"slow-bodies": (40, 1), "slowloris": (1_500, 1), "slowloris-workers": (9_000, 2)}
QUICK_ATTACKS = {"slow-bodies": (40, 1), "slowloris": (300, 1), "slowloris-workers": (600, 2)}
#: The goals (issue 30): everyone else served under each attack.
GOAL_P99_SECONDS = 1.0


# ---------------------------------------------------------------- the probe (this process)

def probe(base: str, key: str, seconds: float) -> dict[str, Any]:
    """Ask for the tools and /healthz, one after another, for `seconds`; every answer's time and whether it was 2xx,
    and /readyz's statuses."""
    api, health, ready = [], [], []
    end = time.monotonic() + seconds
    with requests.Session() as session:
        while time.monotonic() < end:
            for path, into, headers in (("/v1/tools", api, {"Authorization": f"Bearer {key}"}),
                                        ("/healthz", health, {}), ("/readyz", ready, {})):
                started = time.monotonic()
                try:
                    response = session.get(base + path, headers=headers, timeout=PROBE_TIMEOUT)
                    ok = 200 <= response.status_code < 300
                except requests.RequestException:
                    ok = False
                into.append((time.monotonic() - started, ok))
            time.sleep(PROBE_INTERVAL)
    return {"api": api, "health": health, "ready": ready}


def summary(samples: list[tuple[float, bool]]) -> tuple[float, float]:
    """The p99 of the times (a failure counts as at least PROBE_TIMEOUT), and the share of failures."""
    times = [t if ok else max(t, PROBE_TIMEOUT) for t, ok in samples]
    return p99(times), sum(not ok for _, ok in samples) / len(samples)


# ---------------------------------------------------------------- one attack against one tree

def heads_for(name: str, target: Platform) -> tuple[list[str], str, float]:
    """The heads the attacker sends, the line it drips after, and how often."""
    if name != "slow-bodies":
        return ["GET /v1/tools HTTP/1.1\r\nHost: bench\r\n"], "X-Drip: 1\r\n", HEAD_DRIP
    target.publish_project("shop", [shared_tool("lookup", "http://127.0.0.1:9/never")])
    token = target.session_token()
    conversation = target.open_conversation(token, "shop")["id"]
    turn = target.start_turn(token, conversation)
    cookie = "; ".join(f"{k}={v}" for k, v in requests.get(target.url + "/signin", timeout=10).cookies.items())
    step = (f"POST /v1/conversations/{conversation}/turns/{turn}/steps HTTP/1.1\r\nHost: bench\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{")
    signin = (f"POST /signin HTTP/1.1\r\nHost: bench\r\nCookie: {cookie}\r\n"
              "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\na")
    return [step, signin], "x", BODY_DRIP


def run_attack(name: str, count: int, workers: int, root: Path, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, platform(Path(tmp), workers=workers, root=root) as target:
        heads, line, drip = heads_for(name, target)
        host, port = target.url.removeprefix("http://").split(":")
        spec = {"host": host, "port": int(port), "count": count, "seconds": seconds, "heads": heads, "line": line,
                "drip": drip}
        attacker = subprocess.Popen([PYTHON, "-m", "bench.hostile", json.dumps(spec)], cwd=ROOT,
                                    stdout=subprocess.PIPE, text=True)
        try:
            time.sleep(min(3.0, seconds / 3))  # the attacker's connections open
            seen = probe(target.url, target.admin_key, seconds - min(3.0, seconds / 3))
            out, _ = attacker.communicate(timeout=seconds + 30)
        finally:
            with contextlib.suppress(ProcessLookupError):
                attacker.kill()
        opened = json.loads(out.strip().splitlines()[-1])["opened"] if out.strip() else 0
    api_p99, api_failed = summary(seen["api"])
    health_p99, health_failed = summary(seen["health"])
    ready_failed = sum(not ok for _, ok in seen["ready"]) / len(seen["ready"])
    return {"api_p99": api_p99, "api_failed": api_failed, "health_p99": health_p99, "health_failed": health_failed,
            "ready_failed": ready_failed, "opened": opened, "probes": len(seen["api"])}


def run(attacks: dict[str, tuple[int, int]], seconds: float, before: bool, command: str) -> Report:
    report = Report("slow_clients", "Hostile clients: slow bodies and slowloris heads (issue 30)", command)
    rows, results = [], {}
    with contextlib.ExitStack() as stack:
        trees = [("this tree", ROOT)]
        if before:
            old = stack.enter_context(source_at(BEFORE))
            if old is None:
                report.notes.append(f"The tree at {BEFORE} could not be had here: no before figures.")
            else:
                trees.insert(0, (f"before ({BEFORE})", old))
        for name, (count, workers) in attacks.items():
            for label, root in trees:
                result = run_attack(name, count, workers, root, seconds)
                results[(name, label)] = result
                rows.append([name, f"{count:,} on {workers} worker{'s' if workers > 1 else ''}", label,
                             f"{result['opened']:,}", f"{result['api_p99'] * 1000:,.0f} ms",
                             f"{result['api_failed']:.0%}", f"{result['health_p99'] * 1000:,.0f} ms",
                             f"{result['health_failed']:.0%}", f"{result['ready_failed']:.0%}"])
    report.tables.append(table(["attack", "connections", "tree", "opened", "API p99", "API failed", "/healthz p99",
                                "/healthz failed", "/readyz not 200"], rows))
    for name, (count, workers) in attacks.items():
        mine = results[(name, "this tree")]
        met = mine["api_p99"] < GOAL_P99_SECONDS and mine["health_p99"] < GOAL_P99_SECONDS and \
            mine["api_failed"] == 0 and mine["health_failed"] == 0
        report.goal(f"{name} ({count:,} on {workers} worker(s)): API and /healthz p99 < 1 s, none failed",
                    f"API {mine['api_p99'] * 1000:,.0f} ms, /healthz {mine['health_p99'] * 1000:,.0f} ms, failed "
                    f"{mine['api_failed']:.0%} / {mine['health_failed']:.0%}", met)
    report.notes.append(f"Each attack lasts {seconds:g} s; a probe that is not answered 2xx counts as failed, and as "
                        f"at least {PROBE_TIMEOUT:g} s in the p99. 'opened' counts the attacker's connections, new "
                        "ones included: past its deadlines or cap the platform closes a connection and the attacker "
                        "opens another.")
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short attacks with fewer connections")
    parser.add_argument("--only", help=f"comma-separated, of {', '.join(ATTACKS)}")
    parser.add_argument("--no-before", action="store_true", help=f"this tree only, not the tree at {BEFORE}")
    options = parser.parse_args(args)
    attacks = QUICK_ATTACKS if options.quick else ATTACKS
    if options.only:
        unknown = set(options.only.split(",")) - set(attacks)
        if unknown:
            parser.error(f"unknown attack {', '.join(sorted(unknown))}")
        attacks = {k: v for k, v in attacks.items() if k in options.only.split(",")}
    seconds = QUICK_ATTACK_SECONDS if options.quick else ATTACK_SECONDS
    run(attacks, seconds, not options.no_before, " ".join([COMMAND, *args])).emit(json_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
