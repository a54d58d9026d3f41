"""What bench/scale.py does over HTTP: time a list request, sign in to the dashboard, drive one-call steps, and run
a purge of the call log while steps are served."""
from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any, Callable

import requests

from bench.common import PYTHON, ROOT, Platform, cpu_seconds, median, p99, shared_tool

#: Longest the benchmark waits for one answer (an unpaged list of 100,000 tools takes about a minute).
ANSWER_SECONDS = 900
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
COOKIE = "toolgate_dashboard"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


@dataclass
class Sample:
    """One request timed again and again: seconds of each, the statuses seen, the last answer's size and body."""

    seconds: list[float] = field(default_factory=list)
    statuses: set[int] = field(default_factory=set)
    size: int = 0
    body: Any = None
    #: Why it was not measured, when it was not.
    skipped: str = ""

    def cell(self) -> str:
        """`p50 / p95 ms`, and any status but 200."""
        if not self.seconds:
            return self.skipped or "-"
        text = f"{_ms(median(self.seconds))} / {_ms(p95(self.seconds))}"
        odd = sorted(s for s in self.statuses if s != 200)
        return text + (f" ({', '.join(map(str, odd))})" if odd else "")

    @property
    def p50(self) -> float:
        return median(self.seconds)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}" if seconds >= 0.1 else f"{seconds * 1000:.1f}"


def sample(get: Callable[[], requests.Response], repeats: int, budget: float) -> Sample:
    """Up to `repeats` runs of `get` (after one unmeasured, unless that one alone took a second or more), stopping
    once `budget` seconds have gone; at least one run is kept."""
    found = Sample()
    started = time.perf_counter()
    first = True
    while len(found.seconds) < repeats and (not found.seconds or time.perf_counter() - started < budget):
        at = time.perf_counter()
        response = get()
        took = time.perf_counter() - at
        found.statuses.add(response.status_code)
        found.size = len(response.content)
        if first and took < 1.0:
            first = False
            continue
        first = False
        found.seconds.append(took)
        if response.headers.get("Content-Type", "").startswith("application/json"):
            found.body = response.json()
    return found


class Reader:
    """Requests as an API key (`api`) and as a person signed in to the dashboard with it (`page`)."""

    def __init__(self, running: Platform):
        self.running = running
        self.session = requests.Session()
        self.cookie = self._sign_in()

    def _sign_in(self) -> str:
        # requests will not send a Secure cookie over plain http (a browser does, to 127.0.0.1): kept by hand.
        form = requests.get(self.running.url + "/signin", timeout=30)
        cookie = SimpleCookie(form.headers.get("Set-Cookie", ""))[COOKIE].value
        token = _CSRF.search(form.text)
        answer = requests.post(self.running.url + "/signin", timeout=30, allow_redirects=False,
                               data={"api_key": self.running.admin_key, "csrf_token": token[1] if token else ""},
                               headers={"Cookie": f"{COOKIE}={cookie}"})
        signed = SimpleCookie(answer.headers.get("Set-Cookie", "")).get(COOKIE)
        if answer.status_code not in (302, 303) or signed is None:
            raise RuntimeError(f"dashboard sign-in: {answer.status_code} {answer.text[:200]}")
        return signed.value

    def api(self, path: str) -> requests.Response:
        return self.session.get(self.running.url + path, timeout=ANSWER_SECONDS,
                                headers={"Authorization": f"Bearer {self.running.admin_key}"})

    def page(self, path: str) -> requests.Response:
        return self.session.get(self.running.url + path, timeout=ANSWER_SECONDS, allow_redirects=False,
                                headers={"Cookie": f"{COOKIE}={self.cookie}"})


class Steps:
    """One-call steps of one turn on `running`, each checked to have succeeded."""

    def __init__(self, running: Platform, tool_url: str):
        self.running = running
        running.publish_project("steps", [shared_tool("fast", tool_url)])
        token = running.session_token()
        conversation = running.open_conversation(token, "steps")["id"]
        turn = running.start_turn(token, conversation)
        self.url = f"{running.url}/v1/conversations/{conversation}/turns/{turn}/steps"
        self.headers = {"Authorization": f"Bearer {token}"}
        self.body = {"calls": [{"id": "1", "name": "fast", "arguments": {}}]}

    def one(self, session: requests.Session) -> float:
        at = time.perf_counter()
        response = session.post(self.url, json=self.body, headers=self.headers, timeout=60)
        took = time.perf_counter() - at
        if response.status_code != 200 or "error" in response.json()["results"][0]:
            raise RuntimeError(f"a step failed: {response.status_code} {response.text[:200]}")
        return took

    def run(self, count: int) -> tuple[list[float], float]:
        """`count` sequential steps: their seconds, and the serving process's CPU seconds per step."""
        session = requests.Session()
        cpu = cpu_seconds(self.running.pid)
        seconds = [self.one(session) for _ in range(count)]
        return seconds, (cpu_seconds(self.running.pid) - cpu) / count


@dataclass
class Purge:
    """A purge run while steps were served: its duration and output, and the steps' seconds before and during."""

    seconds: float
    output: str
    finished: bool
    before: list[float]
    during: list[float]


def purge_while_serving(steps: Steps, database_url: str, clients: int, limit: float, settle: float = 3.0) -> Purge:
    """`toolgate calls purge --days 0` (every record written before it starts) while `clients` threads send one-call
    steps without pause; `settle` seconds of steps first, for the p99 without a purge. Stopped after `limit` s."""
    times: list[tuple[float, float]] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def client() -> None:
        session = requests.Session()
        while not stop.is_set():
            try:
                took = steps.one(session)
            except Exception as error:  # said in the report below
                errors.append(error)
                return
            times.append((time.perf_counter(), took))

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(settle)
    started = time.perf_counter()
    env = {**os.environ, "TOOLGATE_DATABASE_URL": database_url}
    try:
        done = subprocess.run([PYTHON, "-m", "service.entry", "calls", "purge", "--days", "0"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=limit, check=False)
        output, finished = (done.stdout + done.stderr).strip(), done.returncode == 0
    except subprocess.TimeoutExpired:
        output, finished = f"stopped after {limit:g} s", False
    ended = time.perf_counter()
    stop.set()
    for thread in threads:
        thread.join(timeout=70)
    if errors:
        raise RuntimeError(f"a step failed during the purge: {errors[0]}")
    before = [took for at, took in times if at < started]
    during = [took for at, took in times if started <= at - took and at <= ended]
    return Purge(ended - started, output[-300:], finished, before, during)


def p99_ms(values: list[float]) -> str:
    return f"{p99(values) * 1000:.0f}" if values else "-"
