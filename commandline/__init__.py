"""The one runner of every Toolgate command line: click commands, run as a process's whole command line.

`toolgate` (service/cli.py), `python -m mock_backend`, the model server's own entry point and `python -m conformance`
all run their click command through `run`, so each says a bad command line the same way (one line, naming the
command, exit 2) and turns what happened into the same exit statuses: 0 done, 1 done with a failure found, 2 could
not run. It imports click and the serve loop's exit status only, so the service, the mock and the kit, which must not
import each other's way down, can all stand on it.
"""
from __future__ import annotations

from typing import Callable

import click

from serving import EXIT_CANNOT_START

__all__ = ["EXIT_CANNOT_RUN", "PORT", "CannotRun", "Checked", "run"]

#: The exit status of a command that could not run: the serve loop's own, which cannot start.
EXIT_CANNOT_RUN = EXIT_CANNOT_START


#: A port option's type: a port past 65535 is refused naming the option, not met by an OverflowError at bind.
PORT = click.IntRange(0, 65535)


class CannotRun(click.ClickException):
    """A command that cannot run (a setting, an argument, an address, a file): one sentence on stderr, exit 2."""

    exit_code = EXIT_CANNOT_RUN


class Checked(click.ParamType):
    """An option's value through `check`, which answers the value or raises ValueError with the rule it breaks;
    click then names the option: "Invalid value for '--port': 70000 is not a port: …"."""

    def __init__(self, name: str, check: Callable[[str], object]) -> None:
        self.name = name
        self.check = check

    def convert(self, value, param, ctx):
        if not isinstance(value, str):  # a default, already checked when it was written
            return value
        try:
            return self.check(value)
        except ValueError as error:
            self.fail(str(error), param, ctx)


def run(command: click.Command, argv: list[str] | None, prog: str,
        explain: Callable[[BaseException], str | None] | None = None) -> int:
    """Run `command` with `argv` (default: the process's) as program `prog`; answer its exit status.

    A command's callback may answer its own status (an int); otherwise 0. A usage error is one line naming the
    command; `explain` turns an exception that means "could not run" into its sentence (None: a bug, re-raised)."""
    try:
        status = command.main(args=argv, prog_name=prog, standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as error:  # a bare group: its help, yet not a run
        click.echo(error.ctx.get_help(), err=True)
        return EXIT_CANNOT_RUN
    except click.UsageError as error:  # one line naming the command, not click's usage block
        where = error.ctx.command_path if error.ctx is not None else prog
        click.echo(f"Error: {where}: {error.format_message()}", err=True)
        return EXIT_CANNOT_RUN
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.Abort:
        return 1
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1
    except Exception as error:
        reason = explain(error) if explain is not None else None
        if reason is None:
            raise
        click.echo(f"Error: {reason}", err=True)
        return EXIT_CANNOT_RUN
    return status if isinstance(status, int) else 0
