"""bench/scale.py's figures as tables and goals."""
from __future__ import annotations

from typing import TYPE_CHECKING

from bench.common import Report, median, p99, table
from bench.scale_http import Sample, p99_ms

if TYPE_CHECKING:
    from bench.scale import Run


def fill(report: Report, run: "Run") -> None:
    from bench.scale import (
        GOAL_CALLS,
        GOAL_REGISTER,
        GOAL_TOOLS,
        LIST_SECONDS,
        PURGE_CLIENTS,
        PURGE_P99_SECONDS,
        REGISTER_SECONDS,
        SCREEN_SECONDS,
        STEP_RATIO,
        SUMMARY,
        SUMMARY_SECONDS,
        count,
    )

    for figures, unit in ((run.tools, "tools"), (run.calls, "call records")):
        if figures:
            report.tables.append(_lists(figures, unit))
    if run.tools:
        report.tables.append(_answers(run.tools))
    if run.register:
        report.tables.append(table(["engine", "tools registered", "clients", "wall time", "p50 ms a request",
                                    "p95 ms", "tools a second"], run.register))
    if run.step_rows:
        report.tables.append(table(["engine", "a one-call step beside", "steps", "p50 ms", "p99 ms",
                                    "service CPU µs a step (over all rounds)"], run.step_rows))
    if run.purges:
        report.tables.append(table(
            ["engine", "purged", "purge took", "purge said", f"steps during it ({PURGE_CLIENTS} clients)",
             "step p50 ms", "step p99 ms", "step p99 ms before it"],
            [[engine, count(size), f"{purge.seconds:.1f} s" + ("" if purge.finished else " (stopped)"),
              purge.output.replace("|", "/"), len(purge.during),
              f"{median(purge.during) * 1000:.1f}" if purge.during else "-", p99_ms(purge.during),
              p99_ms(purge.before)] for engine, (size, purge) in run.purges.items()]))
    if run.writes:
        report.tables.append(table(["engine", "written in bulk by the benchmark", "took"], run.writes))

    for engine in run.engines:
        _list_goal(report, run.tools, engine, GOAL_TOOLS, "tools", LIST_SECONDS)
        lists = {key: {label: s for label, s in samples.items() if not label.startswith(SUMMARY)}
                 for key, samples in run.calls.items()}
        _list_goal(report, lists, engine, GOAL_CALLS, "call records", LIST_SECONDS)
        _summary_goals(report, run.calls, engine, SUMMARY, SUMMARY_SECONDS, SCREEN_SECONDS)
        if engine in run.register_seconds:
            total = run.sizes["register"][-1]
            wall = run.register_seconds[engine]
            report.goal(f"registering {GOAL_REGISTER:,} tools through the API < {REGISTER_SECONDS:g} s ({engine})",
                        f"{wall:.1f} s for {total:,}", wall < REGISTER_SECONDS if total >= GOAL_REGISTER else None)
        if engine in run.step_ratio:
            latency, cpu = run.step_ratio[engine]
            size = run.sizes["calls"][-1]
            report.goal(f"a one-call step beside {count(size)} records within {STEP_RATIO - 1:.0%} of one beside an "
                        f"empty log ({engine})", f"latency ×{latency:.2f}, service CPU ×{cpu:.2f}",
                        max(latency, cpu) <= STEP_RATIO)
        if engine in run.purges:
            size, purge = run.purges[engine]
            worst = p99(purge.during) if purge.during else None
            report.goal(f"step p99 < {PURGE_P99_SECONDS * 1000:.0f} ms while {count(size)} records are purged "
                        f"({engine})", "no step measured" if worst is None else
                        f"{worst * 1000:.0f} ms; the purge took {purge.seconds:.0f} s",
                        None if worst is None else worst < PURGE_P99_SECONDS and purge.finished)
    report.notes += [
        "Each list cell is p50 / p95 ms of sequential requests from one client (up to "
        f"{run.repeats} after one unmeasured, fewer where {run.budget:g} s ran out: a request that took a minute is "
        "measured once); a status other than 200 is named in brackets.",
        "The tools are written in bulk into the database with the rows registration writes: the tool, its draft "
        "(the checked definition), an audit `register` record chained onto the trail; two thirds published once "
        "(version 1 and its `publish` record), half of those with a new draft (`start-draft`); one project for "
        "every 200 tools (project, empty draft, `project-create` record), half the tools in one. Registration "
        "through the API is timed on a database of its own.",
        "Call records are written in bulk (executemany in transactions of 200,000 on SQLite, COPY on PostgreSQL), "
        "spread evenly over the past 30 days; 200 tools, 20,000 subjects, 8 calls a conversation, 1% timed-out, "
        "2% other failures. The purge is `toolgate calls purge --days 0`, every record written before it started.",
        "A one-call step's cost is compared in rounds alternating between the full platform and a fresh one "
        "(the empty log) on the same engine, so a machine whose load drifts weighs on both alike.",
    ]


def _lists(figures: dict[tuple[str, int], dict[str, Sample]], unit: str) -> str:
    from bench.scale import count

    columns = list(figures)
    labels = list(dict.fromkeys(label for samples in figures.values() for label in samples))
    headers = ["request"] + [f"{engine} {count(size)} {unit}" for engine, size in columns]
    return table(headers, [[label] + [figures[c][label].cell() if label in figures[c] else "-" for c in columns]
                           for label in labels])


def _answers(figures: dict[tuple[str, int], dict[str, Sample]]) -> str:
    """What the first page of `GET /v1/tools` held: tools, bytes, and whether it was paged (`next` in it)."""
    from bench.scale import count

    lines = []
    for (engine, size), samples in figures.items():
        first = next(iter(samples.values()))
        if not first.seconds:
            lines.append([engine, count(size), first.skipped or "-", "-", "-"])
            continue
        body = first.body if isinstance(first.body, dict) else {}
        lines.append([engine, count(size), len(body.get("tools", [])), f"{first.size / 1024:,.0f} KiB",
                      "yes" if "next" in body else "no (the whole list)"])
    return table(["engine", "tools", "`GET /v1/tools` answered tools", "answer size", "paged"], lines)


def _summary_goals(report: Report, figures: dict[tuple[str, int], dict[str, Sample]], engine: str, summary: str,
                   limit: float, screen_limit: float) -> None:
    """Issue 36's goals at each size measured from 1M up: every summary request, and the Calls screen."""
    from bench.scale import GOAL_SUMMARY_CALLS, count

    for (measured_engine, size), samples in sorted(figures.items()):
        if measured_engine != engine or size < GOAL_SUMMARY_CALLS:
            continue
        summaries = {label: s for label, s in samples.items() if label.startswith(summary) and s.seconds}
        if summaries:
            label, slowest = max(summaries.items(), key=lambda item: item[1].p50)
            report.goal(f"{summary} p50 < {limit * 1000:.0f} ms at {count(size)} call records ({engine})",
                        f"slowest: {label} {slowest.p50 * 1000:.0f} ms",
                        all(s.p50 < limit for s in summaries.values()))
        screen = next((s for label, s in samples.items() if label.startswith("dashboard Calls screen") and s.seconds),
                      None)
        if screen is not None:
            report.goal(f"the Calls screen with its charts p50 < {screen_limit * 1000:.0f} ms at {count(size)} call "
                        f"records ({engine})", f"{screen.p50 * 1000:.0f} ms", screen.p50 < screen_limit)


def _list_goal(report: Report, figures: dict[tuple[str, int], dict[str, Sample]], engine: str, goal_size: int,
               unit: str, limit: float) -> None:
    from bench.scale import count

    sizes = [size for e, size in figures if e == engine]
    if not sizes:
        return
    size = max(sizes)
    measured = {label: s for label, s in figures[(engine, size)].items() if s.seconds}
    if not measured:
        return
    label, slowest = max(measured.items(), key=lambda item: item[1].p50)
    report.goal(f"every list p50 < {limit * 1000:.0f} ms at {count(goal_size)} {unit} ({engine})",
                f"slowest at {count(size)}: {label} {slowest.p50 * 1000:.0f} ms",
                all(s.p50 < limit for s in measured.values()) if size >= goal_size else None,
                "" if size >= goal_size else f"measured at {count(size)} only")
