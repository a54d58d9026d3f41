"""`toolgate` with a chosen HTTP client: `python -m bench.platform --engine requests -- serve --port 8080`.

Only for the benchmarks, which run the same platform with each client side by side. `--defer-records`
is an experiment, not the platform's behaviour: it writes each step's call records (and their log lines
and metrics) in a greenlet of their own after the answer has gone, to measure what that change to
service/conversations/runs.py would buy.
"""
import argparse
import sys

import service.entry  # noqa: F401  # first: patches gevent (and psycopg) before anything else loads
from bench.engines import ENGINES, use
from service.cli import main


def defer_records() -> None:
    """Make runs._record spawn its work instead of doing it before the step's answer."""
    import gevent

    from service.conversations import runs
    from service.database import db

    record = runs._record

    def in_its_own_connection(*args, **kwargs) -> None:
        with db.connection_context():
            record(*args, **kwargs)

    runs._record = lambda *args, **kwargs: gevent.spawn(in_its_own_connection, *args, **kwargs) and None


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.platform")
    parser.add_argument("--engine", choices=ENGINES, default="geventhttpclient")
    parser.add_argument("--defer-records", action="store_true", help="record each step after its answer")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the toolgate command, after --")
    args = parser.parse_args(argv)
    use(args.engine)
    if args.defer_records:
        defer_records()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    return main(command)


if __name__ == "__main__":
    sys.exit(run())
