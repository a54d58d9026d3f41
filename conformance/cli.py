"""The `conformance` command: `endpoint`, `platform` and `list`.

    conformance endpoint --url URL --method M --tool NAME [--subject S] [--other-subject S]
                         [--param k=v …] [--jwks-port P] [--untrusted-port P] [--issuer-host H]
                         [--key-file FILE] [--rotation-wait SECONDS] [--requires-approval]
                         [--case PREFIX …] [--area AREA …] [--skip PREFIX …]
                         [--json FILE] [--junit FILE] [--jobs N]
    conformance platform [--url URL --admin-key KEY [--agent-key KEY]] [--mock-url URL]
                         [--model-url URL] [--case PREFIX …] [--area AREA …] [--skip PREFIX …]
                         [--json FILE] [--junit FILE] [--jobs N]
    conformance list [endpoint|platform] [--case PREFIX …] [--area AREA …] [--skip PREFIX …]

Exit 0 when every selected case passed, 1 when any failed, 2 when the suite could not run (bad
arguments, an unreachable target, a failed pre-flight, nothing selected); a run that could not
run still writes its `--junit` file, with one error saying why. Importing this module patches
nothing; the process entry point does that (`python -m conformance`, or the `toolgate` command).
The commands are click's, run by the one command runner (`commandline`); `toolgate conformance` is this very group.
"""
from __future__ import annotations

import functools
import importlib
import os
import sys
import time
from datetime import datetime, timezone
from types import ModuleType, SimpleNamespace
from typing import Any, Callable, ContextManager, Sequence, TextIO

import click
from gevent import monkey

from commandline import Checked
from commandline import run as run_command
from conformance import report
from conformance.case import Case, Suite
from conformance.limits import DEFAULT_JOBS
from conformance.runner import (
    EXIT_COULD_NOT_RUN,
    CouldNotRun,
    Result,
    Selection,
    run,
    select,
)

#: Each suite's module exposes SUITE, OPTIONS (click options), open_target(args) and banner(target).
SUITES: dict[str, str] = {"endpoint": "conformance.endpoint", "platform": "conformance.platform"}


def execute(
    suite: Suite,
    open_target: Callable[[], ContextManager[Any]],
    selection: Selection,
    *,
    jobs: int = DEFAULT_JOBS,
    json_path: str | None = None,
    junit_path: str | None = None,
    banner: Callable[[Any], Sequence[str]] = lambda target: (),
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Select, open the target, run, print the report and write the files; answer the exit code."""
    out, err = out or sys.stdout, err or sys.stderr
    started, clock = datetime.now(timezone.utc), time.monotonic()
    results: list[Result] = []
    try:
        chosen = select(suite, selection)
        for option, path in (("--json", json_path), ("--junit", junit_path)):
            if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
                json_path = junit_path = None  # nowhere to write either: say so, write nothing
                raise CouldNotRun(f"cannot write {path}: no such directory")
            if path and os.path.isdir(path):
                json_path = junit_path = None
                raise CouldNotRun(f"{option} {path} is a directory, not a file to write the report to")
        if json_path and junit_path and os.path.abspath(json_path) == os.path.abspath(junit_path):
            json_path = junit_path = None
            raise CouldNotRun(f"--json and --junit are both {junit_path}: each report needs a file of its own")
        width = report.id_width(chosen)
        with open_target() as target:
            for text in banner(target):
                print(text, file=out, flush=True)
            for result in run(chosen, target, jobs):
                print(report.line(result, width), file=out, flush=True)
                results.append(result)
    except CouldNotRun as exc:
        print(f"could not run: {exc}", file=err)
        could_not_run_reports(suite.name, str(exc), started, time.monotonic() - clock,
                              json_path, junit_path, err)
        return EXIT_COULD_NOT_RUN
    seconds = time.monotonic() - clock
    for text in report.failures_block(results, width):
        print(text, file=out)
    print(report.closing_line(results), file=out, flush=True)
    try:
        if json_path:
            report.write_json(json_path, suite.name, results, started, seconds)
        if junit_path:
            report.write_junit(junit_path, suite.name, results, started, seconds)
    except OSError as exc:
        print(f"could not write the report: {exc}", file=err)
        return EXIT_COULD_NOT_RUN
    return report.exit_code(results)


def could_not_run_reports(suite: str, reason: str, started: datetime, seconds: float,
                          json_path: str | None, junit_path: str | None, err: TextIO) -> None:
    """Write the reports of a run that could not run, so CI shows why rather than no file."""
    try:
        if json_path:
            report.write_json(json_path, suite, [], started, seconds, could_not_run=reason)
        if junit_path:
            report.write_could_not_run_junit(junit_path, suite, reason, started, seconds)
    except OSError as exc:
        print(f"could not write the report: {exc}", file=err)


def load_suite(name: str) -> ModuleType:
    """The module of suite `name`: SUITE, OPTIONS, open_target, banner."""
    return importlib.import_module(SUITES[name])


def _areas(cases: Sequence[Case]) -> list[str]:
    """The areas of these cases, in order of first appearance."""
    return list(dict.fromkeys(case.area for case in cases))


def _selection_options(cases: Sequence[Case]) -> list[click.Parameter]:
    return [
        click.Option(["--case"], multiple=True, metavar="ID_PREFIX",
                     help="Run the cases whose id starts with this (repeatable)."),
        click.Option(["--area"], multiple=True, metavar="AREA",
                     help="Run the cases of this area (repeatable): " + ", ".join(_areas(cases))),
        click.Option(["--skip"], multiple=True, metavar="ID_PREFIX",
                     help="Leave out the cases whose id starts with this, whatever else selects them (repeatable)."),
    ]


def _selection(params: dict[str, Any]) -> Selection:
    return Selection(tuple(params["case"]), tuple(params["area"]), tuple(params["skip"]))


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise ValueError(f"{text!r} is not a whole number of at least 1")
    return jobs


def _junit_in(argv: Sequence[str]) -> str | None:
    """The --junit FILE of a command line that does not parse, so its run can still leave a report saying why."""
    junit = None
    for index, arg in enumerate(argv):
        if arg == "--junit" and index + 1 < len(argv):
            junit = argv[index + 1]
        elif arg.startswith("--junit="):
            junit = arg.split("=", 1)[1]
    return junit


class SuiteCommand(click.Command):
    """A suite's command: a command line that does not parse still leaves its `--junit` report saying why."""

    def make_context(self, info_name, args, parent=None, **extra):
        started, clock, argv = datetime.now(timezone.utc), time.monotonic(), list(args)
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            junit = _junit_in(argv)
            if junit and os.path.isdir(os.path.dirname(os.path.abspath(junit))):
                where = error.ctx.command_path if error.ctx is not None else str(info_name)
                could_not_run_reports(str(self.name), f"{where}: {error.format_message()}", started,
                                      time.monotonic() - clock, None, junit, sys.stderr)
            raise


def _suite_command(name: str) -> click.Command:
    module = load_suite(name)

    def run_suite(**params: Any) -> int:
        if not monkey.is_module_patched("socket"):
            print("note: this process is not gevent-patched, so cases run one at a time", file=sys.stderr)
        args = SimpleNamespace(**params)
        return execute(module.SUITE, lambda: module.open_target(args), _selection(params), jobs=params["jobs"],
                       json_path=params["json"], junit_path=params["junit"], banner=module.banner)

    return SuiteCommand(name, callback=run_suite, help=(module.__doc__ or "").split("\n\n")[0], params=[
        *module.OPTIONS, *_selection_options(module.SUITE.cases),
        click.Option(["--json"], metavar="FILE", help="Also write the report as JSON."),
        click.Option(["--junit"], metavar="FILE", help="Also write the report as JUnit XML."),
        click.Option(["--jobs"], type=Checked("N", _jobs), default=DEFAULT_JOBS, show_default=True,
                     help="Independent cases run at once."),
    ])


def _list_command() -> click.Command:
    every = [case for name in SUITES for case in load_suite(name).SUITE]

    def list_cases(suite: str | None, **params: Any) -> int:
        names = [suite] if suite else list(SUITES)
        cases = [case for name in names for case in load_suite(name).SUITE]
        try:
            chosen = select(cases, _selection(params))
        except CouldNotRun as exc:
            print(f"could not list: {exc}", file=sys.stderr)
            return EXIT_COULD_NOT_RUN
        width = report.id_width(chosen)
        for case in chosen:
            print(report.listing_line(case, width))
        return 0

    return click.Command("list", callback=list_cases, help="List the cases, id and title.", params=[
        click.Argument(["suite"], required=False, type=click.Choice(list(SUITES))), *_selection_options(every)])


class _Suites(click.Group):
    """The `conformance` group. Its commands are built when asked for: each loads its suite (cases, options), which
    `toolgate serve` and the other commands need not import."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*SUITES, "list"]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return _command(cmd_name) if cmd_name in self.list_commands(ctx) else None


@functools.cache
def _command(name: str) -> click.Command:
    return _list_command() if name == "list" else _suite_command(name)


@click.group(cls=_Suites)
def conformance() -> None:
    """Run the conformance suites: platform (a running Toolgate), endpoint (an integrator's tool endpoint), list.

    Exit 0 when every selected case passed, 1 when any failed, 2 when the suite could not run."""


def main(argv: list[str] | None = None, prog: str = "conformance") -> int:
    """Run the `conformance` command with `argv` (default: the process's); answer the exit code. `prog` is the
    name its usage lines give it (`python -m conformance`; `toolgate conformance` mounts the same group)."""
    return run_command(conformance, argv, prog)
