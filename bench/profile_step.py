"""Where a step's CPU goes: py-spy samples `toolgate serve` while CLIENTS clients post steps (one call each, or more).

Writes a flame graph (SVG) and a text summary (the functions with the most samples, inclusive and self) under
bench/profiles/. Not part of `make bench` (py-spy needs ptrace and a pip install of its own):

    pip install py-spy && python -m bench.profile_step [--seconds 10] [--name step] [--calls 1] [--commit 6c9946c]
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.common import ROOT, endpoint, platform, shared_tool, source_at

CLIENTS = 10
PROFILES = ROOT / "bench" / "profiles"
TOP = 40


async def drive(url: str, token: str, seconds: float, calls: int = 1) -> int:
    """Post steps of `calls` calls from CLIENTS clients for `seconds`; how many were answered."""
    body = {"calls": [{"id": str(i), "name": "fast", "arguments": {}} for i in range(calls)]}
    headers = {"Authorization": f"Bearer {token}"}
    done, until = 0, time.monotonic() + seconds
    async with aiohttp.ClientSession() as session:
        async def client() -> None:
            nonlocal done
            while time.monotonic() < until:
                async with session.post(url, json=body, headers=headers) as response:
                    await response.read()
                    assert response.status == 200, response.status
                done += 1

        await asyncio.gather(*(client() for _ in range(CLIENTS)))
    return done


def summarise(raw: Path) -> str:
    """The frames with the most samples (inclusive: anywhere on the stack; self: at its top) from py-spy's raw
    (collapsed) output."""
    inclusive, own, total = collections.Counter(), collections.Counter(), 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [f.rsplit(":", 1)[0] for f in stack.split(";")]  # drop the line number: one entry a function
        n = int(count)
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    lines = [f"{total} samples", "", "inclusive %  function"]
    lines += [f"{100 * n / total:10.1f}  {f}" for f, n in inclusive.most_common(TOP)]
    lines += ["", "self %  function"] + [f"{100 * n / total:6.1f}  {f}" for f, n in own.most_common(TOP)]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_step", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--name", default="step", help="file name stem under bench/profiles/")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--commit", default=None, help="profile the source at this commit instead (git archive)")
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--calls", type=int, default=1, help="calls a step (steps of 100: the per-call cost)")
    parser.add_argument("--raw", type=Path, default=None, help="also keep py-spy's collapsed stacks here")
    args = parser.parse_args()
    PROFILES.mkdir(exist_ok=True)
    with endpoint() as (base, _pid), tempfile.TemporaryDirectory() as tmp, \
            (source_at(args.commit) if args.commit else contextlib.nullcontext(ROOT)) as root:
        if root is None:
            parser.error(f"git cannot give the source at {args.commit} here")
        with platform(Path(tmp), database_url=args.database_url, root=root) as running:
            running.publish_project("profile", [shared_tool("fast", f"{base}/fast")])
            token = running.session_token()
            conversation = running.open_conversation(token, "profile")["id"]
            url = f"{running.url}/v1/conversations/{conversation}/turns/{running.start_turn(token, conversation)}/steps"
            asyncio.run(drive(url, token, 1.0, args.calls))  # warm: pools, caches
            raw = Path(tmp) / "raw.txt"
            spies = [subprocess.Popen(["py-spy", "record", "--pid", str(running.pid), "--rate", str(args.rate),
                                       "--duration", str(int(args.seconds)), "--nonblocking", "--format", fmt,
                                       "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     for fmt, out in (("raw", raw), ("flamegraph", PROFILES / f"{args.name}.svg"))]
            time.sleep(0.5)
            steps = asyncio.run(drive(url, token, args.seconds, args.calls))
            for spy in spies:
                spy.wait(timeout=args.seconds + 60)
            summary = summarise(raw)
            if args.raw:
                args.raw.write_text(raw.read_text())
    calls = f"{args.calls} call{'s' * (args.calls > 1)}"
    text = f"{steps} steps of {calls} from {CLIENTS} clients in {args.seconds:g} s\n\n{summary}"
    (PROFILES / f"{args.name}.txt").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
