"""Draw one exported trace as a tracing backend's waterfall, and save it as a PNG with the installed Chromium.

Jaeger cannot be installed on the machine the docs are built on, so docs/screenshots/trace-turn.png is drawn from a
real export instead: the spans the suite's OTLP receiver decoded in the turn test (written as JSON when
TOOLGATE_TRACE_OUT names a file). Each span becomes one row with its name, its service, its attributes' ids and
kinds, and a bar at its start time with its duration, indented under its parent, as Jaeger lays out a trace.

    TOOLGATE_TRACE_OUT=/tmp/spans.json .venv/bin/python -m pytest tests/tracing/test_traces.py -k whole_turn
    .venv/bin/python -m tests.tracing.waterfall /tmp/spans.json docs/screenshots/trace-turn.png
"""
from __future__ import annotations

import html
import json
import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
#: The attributes shown beside a span's name: what a reader looks for first, never anything private (there is none).
SHOWN = ("gen_ai.tool.call.id", "http.response.status_code", "error.type", "gen_ai.usage.input_tokens",
         "toolgate.turn.stopped", "toolgate.session_start")
COLOURS = {"server": "#4f7cac", "execute_tool": "#3d9970", "chat": "#b5651d", "invoke_agent": "#7a5195",
           "step": "#888"}


def _colour(name: str, kind: str) -> str:
    return COLOURS["server"] if kind == "server" else COLOURS.get(name.split(" ")[0], "#888")


def _ordered(spans: list[dict]) -> list[tuple[int, dict]]:
    """(depth, span) in depth-first order, children by start time, the traces' roots by start time."""
    ids = {s["span_id"] for s in spans}
    children: dict[str, list[dict]] = {}
    for span in spans:
        children.setdefault(span["parent_id"] if span["parent_id"] in ids else "", []).append(span)
    ordered: list[tuple[int, dict]] = []

    def walk(parent: str, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: s["start_ns"]):
            ordered.append((depth, span))
            walk(span["span_id"], depth + 1)

    walk("", 0)
    return ordered


def page(spans: list[dict], title: str) -> str:
    """The waterfall of `spans` as one HTML page."""
    rows = _ordered(spans)
    start = min(s["start_ns"] for s in spans)
    total = max(s["end_ns"] for s in spans) - start or 1
    lines = []
    for depth, span in rows:
        left = (span["start_ns"] - start) / total * 100
        width = max((span["end_ns"] - span["start_ns"]) / total * 100, 0.3)
        shown = " ".join(f"{k.split('.')[-1]}={span['attributes'][k]}" for k in SHOWN if k in span["attributes"])
        events = " ".join(f"◆ {name}" for name, _ in span["events"])
        error = ' <span class="error">ERROR</span>' if span["error"] else ""
        lines.append(
            f'<div class="row"><div class="label" style="padding-left:{depth * 16 + 6}px">'
            f'<b>{html.escape(span["name"])}</b>{error} <small>{html.escape(shown)}</small></div>'
            f'<div class="lane"><div class="bar" style="left:{left:.2f}%;width:{width:.2f}%;'
            f'background:{_colour(span["name"], span["kind"])}"></div></div>'
            f'<div class="time">{(span["end_ns"] - span["start_ns"]) / 1e6:.1f} ms '
            f'<span class="event">{html.escape(events)}</span></div></div>')
    service = spans[0]["resource"].get("service.name", "")
    return f"""<!doctype html><meta charset="utf-8"><style>
body {{ font: 13px system-ui, sans-serif; margin: 16px; color: #222; }}
h1 {{ font-size: 16px; margin: 0 0 4px; }} .meta {{ color: #666; margin-bottom: 12px; }}
.row {{ display: flex; border-bottom: 1px solid #eee; height: 26px; align-items: center; }}
.label {{ width: 520px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
.label small {{ color: #666; }} .error {{ color: #c0392b; font-weight: bold; }}
.lane {{ position: relative; flex: 1; height: 100%; }}
.bar {{ position: absolute; top: 7px; height: 12px; border-radius: 2px; }}
.time {{ width: 230px; padding-left: 10px; color: #555; white-space: nowrap; }} .event {{ color: #7a5195; }}
</style><h1>{html.escape(title)}</h1>
<div class="meta">service {html.escape(str(service))} · {len(spans)} spans · {total / 1e6:.1f} ms ·
trace {html.escape(rows[0][1]["trace_id"])}</div>
{"".join(lines)}"""


def main(argv: list[str]) -> int:
    source, target = Path(argv[0]), Path(argv[1])
    spans = json.loads(source.read_text())
    # The turn's trace: the one holding the first turn span (the conversation's opening and the decision are
    # traces of their own, as each request without a caller's traceparent is).
    turn = next(s for s in spans if s["name"].startswith("invoke_agent"))
    shown = [s for s in spans if s["trace_id"] == turn["trace_id"]]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            view = browser.new_page(viewport={"width": 1280, "height": 120 + 26 * len(shown)})
            view.set_content(page(shown, "A traced turn: POST …/messages, the turn, its model call, its step and "
                                         "the step's calls"))
            view.screenshot(path=str(target), full_page=True)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
