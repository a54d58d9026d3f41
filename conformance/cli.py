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
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from datetime import datetime, timezone
from types import ModuleType
from typing import Any, Callable, ContextManager, Sequence, TextIO

from gevent import monkey

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

#: Each suite's module exposes SUITE, add_arguments(parser), open_target(args) and banner(target).
SUITES: dict[str, str] = {"endpoint": "conformance.endpoint", "platform": "conformance.platform"}

#: Suites the command knows of but this build does not carry, with what to say instead.
NOT_IN_BUILD: dict[str, str] = {}


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
    """The module of suite `name`: SUITE, add_arguments, open_target, banner."""
    return importlib.import_module(SUITES[name])


def _areas(cases: Sequence[Case]) -> list[str]:
    """The areas of these cases, in order of first appearance."""
    return list(dict.fromkeys(case.area for case in cases))


def _add_selection(parser: argparse.ArgumentParser, cases: Sequence[Case]) -> None:
    parser.add_argument("--case", action="append", default=[], metavar="ID_PREFIX",
                        help="run the cases whose id starts with this (repeatable)")
    parser.add_argument("--area", action="append", default=[], metavar="AREA",
                        help="run the cases of this area (repeatable): " + ", ".join(_areas(cases)))
    parser.add_argument("--skip", action="append", default=[], metavar="ID_PREFIX",
                        help="leave out the cases whose id starts with this, whatever else selects "
                             "them (repeatable)")


def _selection(args: argparse.Namespace) -> Selection:
    return Selection(tuple(args.case), tuple(args.area), tuple(args.skip))


class BadArguments(Exception):
    """The command line does not parse; the message is argparse's."""


class _Parser(argparse.ArgumentParser):
    """argparse, raising rather than exiting on bad arguments, so the run can still write its
    `--junit` report saying why it could not run."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise BadArguments(f"{self.prog}: error: {message}")


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return jobs


def _parser(prog: str = "conformance") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Toolgate conformance kit.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in SUITES:
        module = load_suite(name)
        sub = commands.add_parser(name, help=(module.__doc__ or "").splitlines()[0])
        module.add_arguments(sub)
        _add_selection(sub, module.SUITE.cases)
        sub.add_argument("--json", metavar="FILE", help="also write the report as JSON")
        sub.add_argument("--junit", metavar="FILE", help="also write the report as JUnit XML")
        sub.add_argument("--jobs", type=_jobs, default=DEFAULT_JOBS,
                         help=f"independent cases run at once (default {DEFAULT_JOBS})")
    for name, message in NOT_IN_BUILD.items():
        commands.add_parser(name, help=message)
    listing = commands.add_parser("list", help="list the cases, id and title")
    listing.add_argument("suite", nargs="?", choices=[*SUITES, *NOT_IN_BUILD])
    _add_selection(listing, [case for name in SUITES for case in load_suite(name).SUITE])
    return parser


def _list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.suite in NOT_IN_BUILD:
        print(NOT_IN_BUILD[args.suite], file=err)
        return EXIT_COULD_NOT_RUN
    names = [args.suite] if args.suite else list(SUITES)
    cases = [case for name in names for case in load_suite(name).SUITE]
    try:
        chosen = select(cases, _selection(args))
    except CouldNotRun as exc:
        print(f"could not list: {exc}", file=err)
        return EXIT_COULD_NOT_RUN
    width = report.id_width(chosen)
    for case in chosen:
        print(report.listing_line(case, width), file=out)
    return 0


def _junit_in(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """(suite, --junit FILE) read from a command line that does not parse, so its run can still
    leave a report saying why; (None, None) when either cannot be found."""
    suite = next((arg for arg in argv if not arg.startswith("-")), None)
    junit = None
    for index, arg in enumerate(argv):
        if arg == "--junit" and index + 1 < len(argv):
            junit = argv[index + 1]
        elif arg.startswith("--junit="):
            junit = arg.split("=", 1)[1]
    return (suite, junit) if suite in SUITES and junit else (None, None)


def main(argv: list[str] | None = None, prog: str = "conformance") -> int:
    """Run the `conformance` command with `argv` (default: the process's); answer the exit code. `prog` is the
    name its usage lines give it (`toolgate conformance` under the `toolgate` command)."""
    out, err = sys.stdout, sys.stderr
    argv = sys.argv[1:] if argv is None else list(argv)
    started, clock = datetime.now(timezone.utc), time.monotonic()
    parser = _parser(prog)
    try:
        args, unknown = parser.parse_known_args(argv)
        if args.command in NOT_IN_BUILD:  # whatever its arguments: the suite is not here
            print(NOT_IN_BUILD[args.command], file=err)
            return EXIT_COULD_NOT_RUN
        if unknown:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    except BadArguments as exc:
        print(exc, file=err)
        suite, junit = _junit_in(argv)
        if suite and os.path.isdir(os.path.dirname(os.path.abspath(junit))):
            could_not_run_reports(suite, str(exc), started, time.monotonic() - clock, None, junit, err)
        return EXIT_COULD_NOT_RUN
    except SystemExit as exc:  # argparse exits on --help (0)
        return exc.code if isinstance(exc.code, int) else EXIT_COULD_NOT_RUN
    if args.command == "list":
        return _list(args, out, err)
    if not monkey.is_module_patched("socket"):
        print("note: this process is not gevent-patched, so cases run one at a time",
              file=err)
    module = load_suite(args.command)
    return execute(
        module.SUITE,
        lambda: module.open_target(args),
        _selection(args),
        jobs=args.jobs,
        json_path=args.json,
        junit_path=args.junit,
        banner=module.banner,
        out=out,
        err=err,
    )
