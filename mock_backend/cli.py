"""`python -m mock_backend` / `toolgate mock-backend`: serve the mock under gevent.

This module does not patch gevent: the process's entry point does that first (mock_backend's
`__main__`, or the `toolgate` command), before anything imports socket or ssl.
"""
from __future__ import annotations

import argparse
import sys

from mock_backend.app import create_app
from mock_backend.server import serve
from mock_backend.verify import BROKEN_MODES


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mock_backend",
        description="Toolgate's mock backend: a demo shop and misbehaviour on demand, "
                    "behind a strict check of the platform's call assertions.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8090, help="port to listen on; 0 picks a free one")
    parser.add_argument("--issuer", action="append", required=True, metavar="ISS",
                        help="an issuer to trust (repeatable); its keys come from ISS/.well-known/jwks.json")
    parser.add_argument("--broken", metavar="MODE",
                        help=f"switch off one check, for negative tests only: {', '.join(BROKEN_MODES)}")
    # Off by default: a parent that reads only the first stdout line and leaves stderr in an
    # unread pipe would otherwise stall the mock once the pipe fills. GET /_calls has it all.
    parser.add_argument("--access-log", action="store_true", help="log each request to stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the mock backend until interrupted; 0 on a clean stop, 2 when it cannot start."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # argparse has already printed the usage, or --help
        return stop.code if isinstance(stop.code, int) else 2
    try:
        app = create_app(args.issuer, broken=args.broken)
    except ValueError as error:
        print(f"mock backend: {error}", file=sys.stderr)
        return 2
    notes = (f"WARNING: broken mode {args.broken!r}, one check is off",) if args.broken else ()
    return serve(app, args.host, args.port, name="mock backend", log="default" if args.access_log else None,
                 notes=notes, ready=f"mock backend listening on {{url}} (trusting: {', '.join(args.issuer)})")
