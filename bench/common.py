"""What every benchmark shares: child processes on 127.0.0.1, a platform set up through its own CLI and
API, process CPU and memory readings, medians, and tables.

The benchmark process itself does not patch gevent: it drives the platform with aiohttp (the bare
client the platform is compared with) and runs each server as a child process, so the figures of
the platform and of its load generator never mix.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform as host
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence
from urllib.parse import quote

import requests

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SECRET = "bench-secret-key-for-sealing-private-keys"
#: The PostgreSQL the benchmarks run in, each in a fresh schema of its own.
POSTGRES_URL = (os.environ.get("TOOLGATE_BENCH_POSTGRES_URL") or os.environ.get("TOOLGATE_TEST_POSTGRES_URL")
                or "postgresql://postgres@127.0.0.1:5432/test")
#: The commit before issue 15's work (the per-step cost), run side by side as "before" where a benchmark can.
BEFORE_COMMIT = "6c9946c"
#: How long a child has to come up before the benchmark gives up.
START_SECONDS = 30.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- figures and tables

def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def p99(values: Sequence[float]) -> float:
    """The 99th percentile (the largest value when there are fewer than 100)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table, aligned so it also reads well in a terminal."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in cells]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(lines)


@dataclass
class Report:
    """One benchmark's outcome: its tables, the goals it checks, and the command that reruns it."""

    name: str
    title: str
    command: str
    tables: list[str] = field(default_factory=list)
    goals: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Figures other benchmarks read (call_overhead's steps per second, for the peer's ratio).
    extra: dict[str, Any] = field(default_factory=dict)

    def goal(self, text: str, measured: str, met: bool | None, limit: str = "") -> None:
        """Record a goal; `met` None means it could not be measured in this run."""
        self.goals.append({"goal": text, "measured": measured, "met": met, "limit": limit})

    def render(self) -> str:
        parts = [f"## {self.title}", "", f"`{self.command}`", ""]
        for block in self.tables:
            parts += [block, ""]
        if self.goals:
            rows = [(g["goal"], g["measured"], verdict(g["met"]), g["limit"]) for g in self.goals]
            parts += [table(["goal", "measured", "verdict", "what limits it"], rows), ""]
        parts += [f"- {note}" for note in self.notes]
        return "\n".join(parts).rstrip() + "\n"

    def emit(self, json_path: str | None) -> None:
        """Print the report; also write it as JSON for `python -m bench` when asked."""
        print(self.render(), flush=True)
        if json_path:
            Path(json_path).write_text(json.dumps(self.__dict__))


def verdict(met: bool | None) -> str:
    return "not measured" if met is None else "met" if met else "NOT met"


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory = "?"
    with contextlib.suppress(OSError, StopIteration):
        kib = int(next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
                  .split()[1])
        memory = f"{kib / 1024 / 1024:.0f} GiB"
    return {"cpu": f"{os.cpu_count()} x {model}", "memory": memory, "os": f"{host.system()} {host.release()}",
            "python": host.python_version()}


# ---------------------------------------------------------------- processes

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def own_cpu_seconds() -> float:
    return time.process_time()


def memory_kib(pid: int, field_name: str = "VmRSS") -> int:
    """A process's resident memory (VmRSS) or its peak since the last reset (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    raise KeyError(field_name)


def reset_peak_memory(pid: int) -> None:
    """Start VmHWM again from the current RSS (Linux: writing 5 to clear_refs)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


@contextlib.contextmanager
def child(args: Sequence[str], *, env: dict[str, str] | None = None, ready_line: str | None = "port ",
          cwd: Path = ROOT) -> Iterator[tuple[subprocess.Popen, str]]:
    """Start `args`, wait for a stdout line starting with `ready_line`, yield (process, that line); always ends it."""
    # Output nobody reads goes nowhere: a full pipe would stall the child.
    process = subprocess.Popen(list(args), cwd=cwd, env={**os.environ, **(env or {})}, text=True,
                               stdout=subprocess.DEVNULL if ready_line is None else subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        line = ""
        if ready_line is not None:
            deadline = time.monotonic() + START_SECONDS
            while not line.startswith(ready_line):
                line = process.stdout.readline()
                if not line and (process.poll() is not None or time.monotonic() > deadline):
                    raise RuntimeError(f"{args[:3]} did not start")
        yield process, line.strip()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def endpoint(*, bomb: bool = False) -> Iterator[tuple[str, int]]:
    """The bare endpoint (bench/endpoint.py) in its own process; yields (base URL, pid)."""
    args = [PYTHON, "-m", "bench.endpoint"] + (["--bomb"] if bomb else [])
    with child(args) as (process, line):
        yield f"http://127.0.0.1:{line.split()[1]}", process.pid


def toolgate(*args: str, env: dict[str, str], root: Path = ROOT) -> str:
    """Run one `toolgate` command (of the source tree at `root`) to completion and return what it printed."""
    done = subprocess.run([PYTHON, "-m", "service.entry", *args], cwd=root, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"toolgate {' '.join(args)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


# ---------------------------------------------------------------- the platform

@dataclass
class Platform:
    """A running `toolgate serve` with one organization, its admin and backend keys."""

    url: str
    pid: int
    admin_key: str
    backend_key: str

    def api(self, method: str, path: str, key: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {key or self.admin_key}"}
        return requests.request(method, self.url + path, headers=headers, **{"timeout": 120, **kwargs})

    def expect(self, status: int, method: str, path: str, key: str | None = None, **kwargs: Any) -> Any:
        response = self.api(method, path, key, **kwargs)
        if response.status_code != status:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
        return response.json() if response.content else None

    def session_token(self, subject: str = "bench-user", entitlements: Sequence[str] = ()) -> str:
        return self.expect(201, "POST", "/v1/session-tokens", self.backend_key, json={
            "subject": subject, "entitlements": list(entitlements), "ttl_seconds": 1800})["token"]

    def publish_project(self, project: str, tools: Sequence[dict[str, Any]]) -> int:
        """Register `tools`, pin their drafts into `project`'s draft and publish it all at once."""
        self.expect(201, "POST", "/v1/projects", json={"name": project})
        for definition in tools:
            self.expect(201, "POST", "/v1/tools", json=definition)
        pins = [{"tool": t["name"], "version": "draft"} for t in tools]
        self.expect(200, "PUT", f"/v1/projects/{project}/draft", json={"pins": pins})
        return self.expect(201, "POST", f"/v1/projects/{project}/publish")["version"]

    def open_conversation(self, token: str, project: str) -> dict[str, Any]:
        return self.expect(201, "POST", "/v1/conversations", token, json={"project": project})

    def start_turn(self, token: str, conversation: str) -> str:
        return self.expect(201, "POST", f"/v1/conversations/{conversation}/turns", token)["turn"]


@contextlib.contextmanager
def source_at(commit: str) -> Iterator[Path | None]:
    """This repository's source tree at `commit`, in a temporary directory; None where git cannot give it (no
    history, no git), so a benchmark can say so and fall back."""
    with tempfile.TemporaryDirectory(prefix="toolgate-before-") as tmp:
        try:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True,
                                     timeout=60).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, capture_output=True, check=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            yield None
            return
        yield Path(tmp)


@contextlib.contextmanager
def postgres_schema(postgres_url: str, prefix: str = "bench") -> Iterator[str]:
    """A URL into a fresh schema of the PostgreSQL at `postgres_url`, dropped afterwards (the caller migrates it)."""
    import psycopg2

    schema = f"{prefix}_{secrets.token_hex(6)}"
    admin = psycopg2.connect(postgres_url, connect_timeout=5)
    admin.autocommit = True
    try:
        admin.cursor().execute(f"CREATE SCHEMA {schema}")
        separator = "&" if "?" in postgres_url else "?"
        yield f"{postgres_url}{separator}options={quote(f'-csearch_path={schema}')}"
    finally:
        admin.cursor().execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


def shared_tool(name: str, url: str, description: str = "", **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description or f"The {name} benchmark tool.", "method": "GET",
            "url": url, "scope": "shared", "parameters": [], **extra}


@contextlib.contextmanager
def platform(tmp: Path, *, engine: str = "geventhttpclient", workers: int = 1, defer_records: bool = False,
             database_url: str | None = None, root: Path = ROOT, under: Sequence[str] = (),
             start_seconds: float = START_SECONDS, env: Mapping[str, str] | None = None) -> Iterator[Platform]:
    """`toolgate serve` on a fresh SQLite database in `tmp` (or `database_url`), loopback allowed.

    `engine` picks the HTTP client calls are sent with, `defer_records` the experiment of recording after
    the answer (bench/platform.py); the organization and keys are made with the `toolgate` CLI, exactly as an
    operator would. `root` is the source tree to run: another than this one (`source_at`) runs as it is, with its
    own engine and without the experiment. `under` is a command the server runs under (a profiler), given
    `start_seconds` to come up. `env`: more variables for the server alone (OpenTelemetry's, bench/tracing_cost.py).
    """
    extra = env
    database_url = database_url or f"sqlite:///{tmp / f'bench-{secrets.token_hex(4)}.db'}"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"TOOLGATE_DATABASE_URL": database_url, "TOOLGATE_SECRET_KEY": SECRET, "TOOLGATE_PUBLIC_URL": base,
           "TOOLGATE_ALLOWED_NETWORKS": "127.0.0.0/8"}
    toolgate("migrate", env=env, root=root)
    org = json.loads(toolgate("org", "create", "bench", "--json", env=env, root=root))
    backend = json.loads(toolgate("key", "create", "--org", "bench", "--role", "backend", "--json", env=env,
                                  root=root))
    serve = ["serve", "--host", "127.0.0.1", "--port", str(port)] + (["--workers", str(workers)] if workers > 1 else [])
    if root == ROOT:
        args = [PYTHON, "-m", "bench.platform", "--engine", engine] + (
            ["--defer-records"] if defer_records else []) + ["--", *serve]
    else:
        args = [PYTHON, "-m", "service.entry", *serve]
    with child([*under, *args], env={**env, **(extra or {})}, ready_line=None, cwd=root) as (process, _):
        _wait_until_up(base, process, start_seconds)
        yield Platform(url=base, pid=process.pid, admin_key=org["admin_key"], backend_key=backend["key"])


def _wait_until_up(base: str, process: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("toolgate serve exited while starting")
        # Refused, or not answered yet: serve binds before it builds the app, so an early request waits.
        with contextlib.suppress(requests.RequestException):
            if requests.get(base + "/openapi.json", timeout=2).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError("toolgate serve did not come up")


def json_arg(argv: Sequence[str] | None) -> tuple[list[str], str | None]:
    """Split `--json PATH` (used by `python -m bench`) off the arguments."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--json" in args:
        at = args.index("--json")
        path = args[at + 1]
        del args[at:at + 2]
        return args, path
    return args, None
