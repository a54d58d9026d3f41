"""An open-source peer gateway, IBM ContextForge (`mcp-contextforge-gateway` on PyPI), against Toolgate in
the same run: the same REST tool on the same fast endpoint, invoked through the peer's `/rpc` and as a
one-call step through Toolgate. Latency of sequential calls, and calls per second with CLIENTS clients.

The peer is installed into a virtualenv of its own under /tmp (never into the project's), the first time
only; when it cannot be installed or started, the benchmark is reported as skipped, saying why.

    python -m bench.peer [--venv /tmp/toolgate-bench-peer] [--no-install]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable, Iterator

import aiohttp
import requests

from bench.common import (
    START_SECONDS,
    Report,
    child,
    endpoint,
    free_port,
    json_arg,
    median,
    p99,
    platform,
    shared_tool,
    table,
)

PEER_PACKAGE = "mcp-contextforge-gateway"
DEFAULT_VENV = Path(tempfile.gettempdir()) / "toolgate-bench-peer"
SEQUENTIAL = 300
CLIENTS = 10
LOAD_SECONDS = 5.0
INSTALL_SECONDS = 900
#: The peer boots (migrations, plugins) far slower than Toolgate.
PEER_START_SECONDS = 120.0
COMMAND = "python -m bench.peer"


class Skipped(Exception):
    """The peer could not be installed or started here; the message says why."""


def ensure_peer(venv: Path, install: bool) -> Path:
    """The peer's `mcpgateway` executable, installing it into `venv` when allowed and missing."""
    executable = venv / "bin" / "mcpgateway"
    if executable.exists():
        return executable
    if not install:
        raise Skipped(f"{PEER_PACKAGE} is not installed in {venv} (and --no-install was given)")
    try:
        subprocess.run(["python3.11", "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", PEER_PACKAGE], check=True,
                       capture_output=True, timeout=INSTALL_SECONDS)
    except (OSError, subprocess.SubprocessError) as exc:
        raise Skipped(f"{PEER_PACKAGE} could not be installed into {venv}: {exc}") from None
    if not executable.exists():
        raise Skipped(f"{PEER_PACKAGE} installed no `mcpgateway` command")
    return executable


@contextlib.contextmanager
def peer(executable: Path, tool_url: str, tmp: Path) -> Iterator[tuple[str, str, str]]:
    """The peer on SQLite with one REST tool; yields (rpc URL, bearer token, the tool's name)."""
    port = free_port()
    secret = secrets.token_hex(32)
    password = "Bench-" + secrets.token_hex(8)
    env = {"DATABASE_URL": f"sqlite:///{tmp / 'peer.db'}", "JWT_SECRET_KEY": secret,
           "AUTH_ENCRYPTION_SECRET": secrets.token_hex(32), "AUTH_REQUIRED": "false", "MCPGATEWAY_UI_ENABLED": "false",
           "MCPGATEWAY_ADMIN_API_ENABLED": "true", "SSRF_ALLOW_LOCALHOST": "true", "DEV_MODE": "true",
           "ENVIRONMENT": "development", "LOG_LEVEL": "ERROR", "PLATFORM_ADMIN_PASSWORD": password,
           "BASIC_AUTH_PASSWORD": password, "CACHE_TYPE": "none", "HOST": "127.0.0.1", "PORT": str(port)}
    base = f"http://127.0.0.1:{port}"
    with child([str(executable), "--host", "127.0.0.1", "--port", str(port)], env=env, ready_line=None) as (process, _):
        deadline = time.monotonic() + max(START_SECONDS, PEER_START_SECONDS)
        while True:
            if process.poll() is not None:
                raise Skipped("the peer exited while starting")
            with contextlib.suppress(requests.ConnectionError):
                if requests.get(base + "/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise Skipped("the peer did not come up")
            time.sleep(0.5)
        made = subprocess.run([str(executable.parent / "python"), "-m", "mcpgateway.utils.create_jwt_token",
                               "--username", "admin@example.com", "--exp", "60", "--secret", secret, "--admin"],
                              capture_output=True, text=True, timeout=60, env={**os.environ, **env}, check=False)
        token = made.stdout.strip().splitlines()[-1] if made.stdout.strip() else ""
        headers = {"Authorization": f"Bearer {token}"}
        created = requests.post(base + "/tools", headers=headers, timeout=30, json={
            "tool": {"name": "fast_rest", "url": tool_url, "integration_type": "REST", "request_type": "GET",
                     "description": "Answers a small JSON object."}, "team_id": None, "visibility": "public"})
        if created.status_code not in (200, 201):
            raise Skipped(f"the peer refused the tool: {created.status_code} {created.text[:200]}")
        yield base + "/rpc", token, created.json()["name"]


async def measure(call: Callable[[aiohttp.ClientSession], Awaitable[None]]) -> dict[str, float]:
    """Sequential latencies of `call`, then calls per second with CLIENTS concurrent clients."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def timed() -> float:
            started = time.perf_counter()
            await call(session)
            return time.perf_counter() - started

        for _ in range(20):
            await call(session)
        latencies = [await timed() for _ in range(SEQUENTIAL)]
        done, until = 0, time.perf_counter() + LOAD_SECONDS

        async def client() -> None:
            nonlocal done
            while time.perf_counter() < until:
                await call(session)
                done += 1

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(CLIENTS)))
        return {"median": median(latencies), "p99": p99(latencies), "rate": done / (time.perf_counter() - started)}


def run(venv: Path, install: bool) -> Report:
    report = Report("peer", "Peer gateway: ContextForge against Toolgate, the same REST tool", COMMAND)
    rows, figures = [], {}
    with endpoint() as (base, _pid), tempfile.TemporaryDirectory() as tmp:
        url = f"{base}/fast"

        async def direct(session: aiohttp.ClientSession) -> None:
            async with session.get(url) as response:
                await response.read()

        figures["direct (aiohttp)"] = asyncio.run(measure(direct))
        try:
            executable = ensure_peer(venv, install)
            with peer(executable, url, Path(tmp)) as (rpc, token, name):
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": {}}}

                async def through_peer(session: aiohttp.ClientSession) -> None:
                    async with session.post(rpc, json=body, headers={"Authorization": f"Bearer {token}"}) as response:
                        answer = await response.json()
                    if "result" not in answer or answer["result"].get("isError"):
                        raise RuntimeError(f"the peer's call failed: {json.dumps(answer)[:200]}")

                figures["ContextForge /rpc"] = asyncio.run(measure(through_peer))
        except Skipped as skipped:
            report.notes.append(f"ContextForge skipped: {skipped}.")
        with platform(Path(tmp)) as running:
            running.publish_project("peer", [shared_tool("fast_rest", url)])
            token = running.session_token()
            conversation = running.open_conversation(token, "peer")["id"]
            step = (f"{running.url}/v1/conversations/{conversation}/turns/"
                    f"{running.start_turn(token, conversation)}/steps")
            body = {"calls": [{"id": "0", "name": "fast_rest", "arguments": {}}]}

            async def through_toolgate(session: aiohttp.ClientSession) -> None:
                async with session.post(step, json=body, headers={"Authorization": f"Bearer {token}"}) as response:
                    results = (await response.json())["results"]
                if "error" in results[0]:
                    raise RuntimeError(f"Toolgate's call failed: {results[0]}")

            figures["Toolgate step"] = asyncio.run(measure(through_toolgate))
    for label, f in figures.items():
        rows.append([label, f"{f['median'] * 1000:.2f}", f"{f['p99'] * 1000:.2f}", f"{f['rate']:.0f}"])
    report.tables.append(table(["path", "median ms", "p99 ms", f"calls/s, {CLIENTS} clients"], rows))
    if "ContextForge /rpc" in figures:
        ratio = figures["Toolgate step"]["rate"] / figures["ContextForge /rpc"]["rate"]
        report.goal("Toolgate throughput >= 20 x the peer's", f"{ratio:.1f} x", ratio >= 20,
                    "Toolgate's per-step CPU (see call_overhead's CPU per call for steps of 1)")
    else:
        report.goal("Toolgate throughput >= 20 x the peer's", "peer not run", None)
    report.notes += [
        f"Latency: {SEQUENTIAL} sequential calls each; throughput: {CLIENTS} asyncio clients for {LOAD_SECONDS:g} s.",
        "Both on SQLite, one process each, with their defaults otherwise; the peer with authentication on "
        "(a JWT it minted) and its SSRF guard allowing localhost; Toolgate with 127.0.0.0/8 allowed.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=Path(os.environ.get("TOOLGATE_PEER_VENV", DEFAULT_VENV)))
    parser.add_argument("--no-install", action="store_true")
    options = parser.parse_args(args)
    run(options.venv, not options.no_install).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
