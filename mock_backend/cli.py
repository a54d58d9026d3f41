"""The mock backend as a click command: `toolgate mock-backend`.

The `toolgate` command adds this very command, so its options and `--help` are written once, here (the scripted
model's command sits beside its app, in model_server.py). The mock stands alone, though: `python -m mock_backend`
runs the same command without the service installed, through the one command runner (`commandline`). It serves
through the one serve loop (`serving`): bound first, then "… listening on URL" printed (so `--port 0` works), a
clean stop and exit 0 on SIGTERM or SIGINT, exit 2 when it cannot start.

Importing this module patches nothing: the process's entry point patches gevent first (mock_backend.entry, or the
`toolgate` command).
"""
from __future__ import annotations

import click

from commandline import PORT, CannotRun, run
from mock_backend.modes import BROKEN_MODES
from mock_backend.server import serve_app


@click.command("mock-backend")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8090, show_default=True, type=PORT,
              help="Port to listen on; 0 picks a free one (the printed URL has it).")
@click.option("--issuer", "issuers", multiple=True, required=True, metavar="ISS",
              help="An issuer to trust (repeatable); its keys come from ISS/.well-known/jwks.json.")
@click.option("--broken", metavar="MODE",
              help=f"Switch off one check, for negative tests only: {', '.join(BROKEN_MODES)}.")
@click.option("--requires-approval", "requires_approval", multiple=True, metavar="TOOL",
              help="A tool whose calls must carry the person's approval (repeatable): a call of it whose "
                   "assertion has no `approval` claim is refused, 401 missing-approval.")
@click.option("--algorithm", type=click.Choice(["ES256", "EdDSA", "RS256"]),
              help="Pin your organization's algorithm (toolgate org create --algorithm): a token in any other is "
                   "refused, 401 bad-algorithm (default: each the platform signs with, as each key's JWK names it).")
@click.option("--single-use", "single_use", multiple=True, metavar="TOOL",
              help="A tool that takes each assertion once (repeatable): a call of it whose assertion's jti was "
                   "taken before is refused, 401 replayed (docs/approvals.md).")
# Off by default: a parent that reads only the first stdout line and leaves stderr in an
# unread pipe would otherwise stall the mock once the pipe fills. GET /_calls has it all.
@click.option("--access-log", is_flag=True, help="Log each request to stderr.")
def mock_backend(host: str, port: int, issuers: tuple[str, ...], broken: str | None,
                 requires_approval: tuple[str, ...], algorithm: str | None, single_use: tuple[str, ...],
                 access_log: bool) -> None:
    """Run the mock backend: a demo shop and misbehaviour on demand, behind a strict check of the platform's
    call assertions. Prints "mock backend listening on URL (trusting: …)" once bound; stops on SIGTERM."""
    from mock_backend.app import create_app

    try:
        app = create_app(issuers, broken=broken, requires_approval=requires_approval,
                         single_use=single_use, **({"algorithms": [algorithm]} if algorithm else {}))
    except ValueError as error:
        raise CannotRun(f"mock backend: {error}") from None
    notes = (f"mock backend: WARNING: broken mode {broken!r}, one check is off",) if broken else ()
    if requires_approval:
        notes += (f"mock backend: calls of {', '.join(requires_approval)} need the person's approval",)
    if single_use:
        notes += (f"mock backend: calls of {', '.join(single_use)} take each assertion once",)
    if algorithm:
        notes += (f"mock backend: only {algorithm} assertions are verified",)
    serve_app(app, host, port, name="mock backend", log="default" if access_log else None, notes=notes,
              ready=f"mock backend listening on {{url}} (trusting: {', '.join(issuers)})")


def main(argv: list[str] | None = None) -> int:
    """`python -m mock_backend`: the mock backend until stopped; 0 on a clean stop, 2 when it cannot start."""
    return run(mock_backend, argv, "python -m mock_backend")
