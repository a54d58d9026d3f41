"""The registry and conversation set-up at size: the offered-tools list of a project of 500 tools,
opening a conversation that runs 20 session-start tools, saving a draft, publishing.

Each figure is the median of REPEATS sequential requests, as the client sees them, to `toolgate serve`
on SQLite. The session-start tools call bench/endpoint.py's `/fast`.

    python -m bench.registry
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Callable

import requests

from bench.common import Report, endpoint, json_arg, median, p99, platform, shared_tool, table

TOOLS = 500
STARTERS = 20
REPEATS = 50
COMMAND = "python -m bench.registry"
#: The goal for the offered-tools list of TOOLS tools.
OFFERED_SECONDS = 0.005


def timed(action: Callable[[], requests.Response], expect: int, repeats: int = REPEATS) -> list[float]:
    """Seconds of each of `repeats` runs of `action`, every one answering `expect`."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = action()
        seconds.append(time.perf_counter() - started)
        if response.status_code != expect:
            raise RuntimeError(f"{response.status_code} {response.text[:300]}")
    return seconds


def run() -> Report:
    report = Report("registry", f"Registry at size: {TOOLS} tools, {STARTERS} session-start tools", COMMAND)
    rows = []
    with endpoint() as (base, _pid), tempfile.TemporaryDirectory() as tmp, platform(Path(tmp)) as running:
        session = requests.Session()

        def add(label: str, seconds: list[float]) -> None:
            rows.append([label, len(seconds), f"{median(seconds) * 1000:.1f}", f"{p99(seconds) * 1000:.1f}"])

        tools = [shared_tool(f"tool_{i:03d}", f"{base}/fast", f"Tool number {i}: answers a small JSON object.",
                             parameters=[{"name": "q", "type": "string", "location": "query", "required": False}])
                 for i in range(TOOLS)]
        started = time.perf_counter()
        running.publish_project("big", tools)
        add(f"register {TOOLS} tools, pin them, publish the project (whole set-up, once)",
            [time.perf_counter() - started])

        token = running.session_token()
        conversation = running.open_conversation(token, "big")
        if len(conversation["tools"]) != TOOLS:
            raise RuntimeError(f"offered {len(conversation['tools'])} tools, expected {TOOLS}")
        tools_url = f"{running.url}/v1/conversations/{conversation['id']}/tools"
        auth = {"Authorization": f"Bearer {token}"}
        session.get(tools_url, headers=auth)
        offered = timed(lambda: session.get(tools_url, headers=auth), 200)
        add(f"offered tools of a {TOOLS}-tool project (GET …/tools)", offered)

        starters = [shared_tool(f"start_{i:02d}", f"{base}/fast", runs_at_session_start=True)
                    for i in range(STARTERS)]
        running.publish_project("starters", starters)
        open_url = f"{running.url}/v1/conversations"
        opened = timed(lambda: session.post(open_url, json={"project": "starters"}, headers=auth), 201)
        add(f"open a conversation running {STARTERS} session-start tools", opened)

        admin = {"Authorization": f"Bearer {running.admin_key}"}
        draft = dict(tools[0], description="Saved again.")
        del draft["name"]
        session.post(f"{running.url}/v1/tools/tool_000/draft", headers=admin)  # publishing the project froze it
        saves = timed(lambda: session.put(f"{running.url}/v1/tools/tool_000/draft", json=draft, headers=admin), 200)
        add("save a tool draft (PUT …/draft)", saves)

        publishes = []
        for i in range(REPEATS):
            name = f"tool_{i + 1:03d}"
            session.post(f"{running.url}/v1/tools/{name}/draft", headers=admin)
            publishes += timed(lambda name=name: session.post(f"{running.url}/v1/tools/{name}/publish", headers=admin),
                               201, 1)
        add("publish a tool draft (POST …/publish)", publishes)

        session.post(f"{running.url}/v1/projects/big/draft", headers=admin)
        project_publish = timed(lambda: session.post(f"{running.url}/v1/projects/big/publish", headers=admin), 201, 1)
        add(f"publish a project version pinning {TOOLS} tools", project_publish)

    report.tables.append(table(["operation", "runs", "median ms", "p99 ms"], rows))
    report.goal(f"offered tools for {TOOLS} tools < 5 ms", f"{median(offered) * 1000:.1f} ms",
                median(offered) < OFFERED_SECONDS,
                "serialising 500 tools' JSON Schemas into the answer, Flask's request handling and the conversation "
                "read (the tools themselves are cached per published project version)")
    report.notes += [
        "Client-side times over HTTP on loopback, one request at a time, `toolgate serve` on SQLite.",
        "Published tool versions are compiled and turned into JSON Schemas once per process and cached.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0]).parse_args(args)
    run().emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
