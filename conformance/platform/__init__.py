"""The platform suite: checks a running Toolgate platform end to end, over HTTP, as an outsider.

`toolgate conformance platform --url URL --admin-key KEY [--agent-key KEY] [--mock-url URL]
[--model-url URL]` checks an organization on a running platform; without `--url` the kit starts a
platform, a mock backend and a scripted model itself on free loopback ports. Without `--mock-url`
(and with `--url`) it starts a mock backend on loopback trusting the organization's issuer, which
the platform must be allowed to reach. A pre-flight (preflight.py) checks the keys, the mock and
the model before any case runs. Every run names its tools and projects with a random prefix, so
runs never collide.
"""
from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Iterator

import click
import requests

from commandline import Checked
from conformance.limits import CALL_DEADLINE_SECONDS
from conformance.platform import cases  # noqa: F401  (declares every case on SUITE)
from conformance.platform.budgets import IN_TIME_MARGIN_SECONDS, REQUEST_TIMEOUT_SECONDS
from conformance.platform.client import PlatformTarget, SetupRefused
from conformance.platform.launch import local_platform, mock_backend
from conformance.platform.model import ScriptedModel
from conformance.platform.preflight import preflight
from conformance.platform.suite import SUITE
from conformance.runner import CouldNotRun

__all__ = ["OPTIONS", "SUITE", "PlatformTarget", "banner", "open_target"]


def _lowered_deadline(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not IN_TIME_MARGIN_SECONDS < seconds <= CALL_DEADLINE_SECONDS:
        raise ValueError(
            f"must be more than {IN_TIME_MARGIN_SECONDS:g} and at most {CALL_DEADLINE_SECONDS:g} seconds "
            f"(it only lowers the spec's deadline, to test the kit); got {text!r}")
    return seconds


#: The platform command's own options (selection and reports are the command's, conformance/cli.py).
OPTIONS: list[click.Parameter] = [
    click.Option(["--url"], help="The platform's base URL; without it the kit starts a platform and a mock backend "
                                 "itself on free loopback ports."),
    click.Option(["--admin-key"], metavar="KEY",
                 help="An admin API key of the organization to check (required with --url)."),
    click.Option(["--agent-key"], metavar="KEY",
                 help="An agent API key of the same organization, for the agent cases (lifecycle/agent-…), which "
                      "error without it."),
    click.Option(["--mock-url"], metavar="URL",
                 help="A mock backend (`toolgate mock-backend`) trusting the organization's issuer and reachable "
                      "from the platform; without it the kit starts one on loopback."),
    click.Option(["--model-url"], metavar="URL",
                 help="The scripted model server (`toolgate model-server`) the platform runs turns with, reachable "
                      "from the kit, for the turn cases (turn/…), which error without it; without --url the kit "
                      "starts one."),
    click.Option(["--call-deadline-seconds"], metavar="S", type=Checked("S", _lowered_deadline),
                 help=f"For testing the kit itself: the platform's call deadline is S seconds, below the spec's "
                      f"{CALL_DEADLINE_SECONDS:g} (a platform the kit starts is given it), so the cases that wait on "
                      f"it take seconds; a conformant platform keeps the spec's."),
]


def _issuer(target: PlatformTarget) -> None:
    """Learn the organization's issuer from a session token, proving the admin key works."""
    try:
        target.session_token()
    except SetupRefused as exc:
        raise CouldNotRun(f"the admin key cannot mint a session token at {target.url}: {exc}") from exc
    except requests.RequestException as exc:
        raise CouldNotRun(f"cannot reach the platform at {target.url}: {exc}") from exc


def _mock_answers(mock_url: str) -> None:
    try:
        requests.get(f"{mock_url}/_health", timeout=REQUEST_TIMEOUT_SECONDS).raise_for_status()
    except requests.RequestException as exc:
        raise CouldNotRun(f"the mock backend at {mock_url} does not answer: {exc}") from exc


@contextlib.contextmanager
def open_target(args: SimpleNamespace) -> Iterator[PlatformTarget]:
    """The platform to check: the one named by --url, or one the kit starts (and stops) itself."""
    deadline = args.call_deadline_seconds or CALL_DEADLINE_SECONDS
    if args.url is None:
        if args.admin_key or args.mock_url or args.model_url:
            raise CouldNotRun("--admin-key, --mock-url and --model-url go with --url; without --url the kit "
                              "starts its own platform, mock backend and model")
        with local_platform(call_deadline_seconds=args.call_deadline_seconds) as started:
            target = PlatformTarget(started.url, started.admin_key, started.mock_url, started.agent_key,
                                    model=ScriptedModel(started.model_url), deadline=deadline)
            _issuer(target)
            preflight(target)
            yield target
        return
    if not args.admin_key:
        raise CouldNotRun("--url needs --admin-key, an admin API key of the organization to check")
    target = PlatformTarget(args.url, args.admin_key, args.mock_url or "", args.agent_key,
                            model=ScriptedModel(args.model_url.rstrip("/")) if args.model_url else None,
                            deadline=deadline)
    _issuer(target)
    if args.mock_url:
        _mock_answers(target.mock_url)
        preflight(target)
        yield target
        return
    with mock_backend(target.issuer) as mock_url:
        target.mock_url = mock_url
        preflight(target)
        yield target


def banner(target: PlatformTarget) -> list[str]:
    """Printed before the cases run: what is checked, and the run's prefix to find its objects by."""
    lines = [f"platform: {target.url}", f"issuer:   {target.issuer}", f"mock:     {target.mock_url}",
             f"run:      {target.run} (every tool and project of this run starts with it)"]
    if target.model is not None:
        lines.insert(3, f"model:    {target.model.url}")
    else:
        lines.append("note:     no --model-url, so the turn cases (turn/…) cannot run")
    if target.agent_key is None:
        lines.append("note:     no --agent-key, so the agent cases (lifecycle/agent-…) cannot run")
    if target.deadline < CALL_DEADLINE_SECONDS:
        lines.append(f"note:     the call deadline is taken as {target.deadline:g} s, not the spec's "
                     f"{CALL_DEADLINE_SECONDS:g} s: a run testing the kit, not a verdict on a platform")
    return lines
