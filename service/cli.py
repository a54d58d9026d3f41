"""The `toolgate` command. Its process entry point is `service.entry`, which patches gevent first.

Exit statuses: 0 done; 1 done, and what it found is a failure (an import with an operation refused, a broken audit
trail); 2 it could not run (a setting it cannot take, a database it cannot open or that is behind, an argument it
refuses, an address it cannot bind), with one sentence on stderr saying why, never a traceback.
"""
from __future__ import annotations

import json
import os
import sys

import click

from commandline import PORT, CannotRun, run
from conformance.cli import conformance as conformance_group
from mock_backend.cli import mock_backend as mock_backend_command
from mock_backend.model_server import command as model_server_command
from service.config import Config
from service.limits import STOP_GRACE_SECONDS

DATABASE_HELP = "Database URL (default: TOOLGATE_DATABASE_URL, else sqlite:///toolgate.db)."


def _config(database: str | None = None, public_url: str | None = None) -> Config:
    try:
        config = Config.from_env()
    except ValueError as error:  # a TOOLGATE_* variable the service cannot take: say which, not a traceback
        raise CannotRun(str(error)) from None
    return config.with_overrides(database_url=database, public_url=public_url)


def _open(config: Config, *, check: bool = True, pooled: bool = True):
    from service.database import make_database, open_database
    from service.migrations import check_current

    try:
        database = open_database(config.database_url) if pooled else make_database(config.database_url, pooled=False)
    except ValueError as error:  # not a URL of either engine
        raise CannotRun(str(error)) from None
    database.connect(reuse_if_open=True)
    if check:
        check_current(database)
    return database


def cannot_run(error: BaseException) -> str | None:
    """The sentence saying why a command could not run, for an exception that means it (the database unreachable or
    behind, the secret key missing), or None for one that is a bug (its traceback is wanted)."""
    from service.database import UNAVAILABLE
    from service.keys.store import MissingSecret
    from service.migrations import SchemaBehind

    if isinstance(error, UNAVAILABLE):
        # A driver's message may run over several lines ("Is the server running on that host…"): one line here.
        said = " ".join(str(error).split()) or type(error).__name__
        return f"The database cannot be used: {said}{'' if said.endswith(('.', '?')) else '.'}"
    if isinstance(error, (MissingSecret, SchemaBehind)):
        return " ".join(str(error).split())
    return None


@click.group()
def cli() -> None:
    """Toolgate: registry, signed dispatch, mock backend and conformance kit."""


@cli.command()
@click.option("--database", help=DATABASE_HELP)
def migrate(database: str | None) -> None:
    """Apply every pending schema migration."""
    from service.migrations import migrate as apply

    applied = apply(_open(_config(database), check=False))
    click.echo("schema is current" if not applied else
               "applied: " + ", ".join(f"{m.number:04d}_{m.name}" for m in applied))


@cli.command(help=f"""Run the service: one gevent process, or with --workers, gunicorn's gevent workers on the same app.

    It binds first, then prints "toolgate listening on URL" with the port actually bound. SIGTERM or Ctrl-C stops it
    cleanly: no new connections, requests in flight get {STOP_GRACE_SECONDS} s to finish, exit 0. It exits 2 when it
    cannot start (the address is taken, the database's schema is behind).""")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=PORT,
              help="Port to listen on; 0 picks a free one (the printed URL has it).")
@click.option("--database", help=DATABASE_HELP)
@click.option("--public-url", help="Base of issuer URLs (default: TOOLGATE_PUBLIC_URL, else the URL listened on).")
@click.option("--workers", type=click.IntRange(1, 64), envvar="TOOLGATE_WORKERS",
              help="Run under gunicorn with this many gevent worker processes (production; default: "
                   "TOOLGATE_WORKERS, else one process on gevent's own server).")
def serve(host: str, port: int, database: str | None, public_url: str | None, workers: int | None) -> None:
    from service import create_app
    from service.migrations import SchemaBehind
    from serving import listen, url_of
    from serving import serve as serve_forever

    try:
        listener = listen(host, port)
    except OSError as error:
        raise CannotRun(f"cannot listen on {host}:{port}: {error}") from None
    url = url_of(listener)
    config = _config(database, public_url)
    if public_url is None and "TOOLGATE_PUBLIC_URL" not in os.environ:
        config = config.with_overrides(public_url=url)
    try:
        if workers is None:
            app = create_app(config)
        else:  # checked once here, on a connection of its own: the workers build their apps after the fork
            _open(config, pooled=False).close()
    except SchemaBehind as error:
        listener.close()
        raise CannotRun(str(error)) from None
    if workers is not None:
        from service.wsgi import serve_workers

        click.echo(f"toolgate listening on {url} with {workers} gevent workers (database {config.database_url})")
        serve_workers(lambda: create_app(config), listener, workers)
        return
    from service.server import service_server

    try:
        serve_forever(service_server(listener, app),
                      ready=f"toolgate listening on {{url}} (database {config.database_url})", grace=STOP_GRACE_SECONDS)
    finally:
        from service import tracing

        tracing.stop()  # the last spans leave before the process does


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address the three servers listen on.")
@click.option("--port", default=8080, show_default=True, type=PORT, help="The service's port; 0 picks a free one.")
@click.option("--mock-port", default=8090, show_default=True, type=PORT,
              help="The mock backend's port (the demo's tools keep the URL they were made with).")
@click.option("--model-port", default=8091, show_default=True, type=PORT, help="The scripted model's port.")
@click.option("--state", default=".toolgate", show_default=True, help="Where the demo keeps its secret and keys.")
def demo(host: str, port: int, mock_port: int, model_port: int, state: str) -> None:
    """The demo (`make run`): the service on SQLite with a demo organization, the mock backend and a model.

    Prints where to look once everything listens; Ctrl-C or SIGTERM stops all three."""
    from service.demo import DemoCannotStart, run

    try:
        run(host, port, mock_port, state, model_port)
    except DemoCannotStart as error:
        raise CannotRun(str(error)) from None


@cli.group()
def org() -> None:
    """Organizations."""


@org.command("create")
@click.argument("slug")
@click.option("--algorithm", default="ES256", show_default=True, type=click.Choice(["ES256", "EdDSA", "RS256"]),
              help="The signing key's algorithm.")
@click.option("--json", "as_json", is_flag=True, help='Print {"org", "issuer", "admin_key"}.')
@click.option("--database", help=DATABASE_HELP)
def org_create(slug: str, algorithm: str, as_json: bool, database: str | None) -> None:
    """Create an organization, its first signing key and an admin API key."""
    from service.errors import ServiceError
    from service.provisioning import create_organization_with_keys

    config = _config(database)
    _open(config)
    try:
        admin_key = create_organization_with_keys(config, slug, algorithm)
    except ServiceError as error:
        raise CannotRun(error.message) from None
    result = {"org": slug, "issuer": config.issuer(slug), "admin_key": admin_key}
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(f"organization {slug}\nissuer       {result['issuer']}\nadmin key    {admin_key}  (shown once)")


@cli.group()
def key() -> None:
    """API keys."""


@key.command("create")
@click.option("--org", "slug", required=True, help="The organization's slug.")
@click.option("--role", required=True, type=click.Choice(["admin", "agent", "backend"]), help="What the key may do.")
@click.option("--label", default="", help="A note shown beside the key in lists.")
@click.option("--json", "as_json", is_flag=True, help='Print {"key", "role"}.')
@click.option("--database", help=DATABASE_HELP)
def key_create(slug: str, role: str, label: str, as_json: bool, database: str | None) -> None:
    """Create an API key (shown once; only its hash is stored)."""
    from service.registry import create_api_key, get_organization

    _open(_config(database))
    organization = get_organization(slug)
    if organization is None:
        raise CannotRun(f"No organization {slug!r}.")
    secret = create_api_key(organization, role, label)
    click.echo(json.dumps({"key": secret, "role": role}) if as_json else f"{role} key {secret}  (shown once)")


@cli.group()
def tools() -> None:
    """Tools of an organization."""


@tools.command("import")
@click.argument("source")
@click.option("--org", "slug", required=True, help="The organization's slug.")
@click.option("--dry-run", is_flag=True, help="Preview only: list what each operation would become; write nothing.")
@click.option("--server", help="The server to call: one of the document's, by URL or index, or any absolute URL.")
@click.option("--subject-parameter", help="The parameter naming the person (e.g. userId): it becomes the subject.")
@click.option("--project", help="The project the new tools belong to (default: organization-wide).")
@click.option("--operation", "operations", multiple=True,
              help='An operationId or "METHOD /path" to import (repeat; default: every ready one).')
@click.option("--update-existing", is_flag=True, help="A tool that exists gets a new draft instead of a refusal.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer of POST /v1/tools/import as JSON.")
@click.option("--database", help=DATABASE_HELP)
def tools_import(source: str, slug: str, dry_run: bool, server: str | None, subject_parameter: str | None,
                 project: str | None, operations: tuple[str, ...], update_existing: bool, as_json: bool,
                 database: str | None) -> None:
    """Import the operations of an OpenAPI 3.0/3.1 document (a FILE, or an http(s) URL fetched through the same
    address guard and deadline as tool calls) as tool drafts; never publishes. Exit 1 if any operation chosen was
    refused."""
    from service.dispatch import AddressGuard
    from service.errors import ServiceError
    from service.importing import run_import
    from service.limits import MAX_IMPORT_DOCUMENT_BYTES
    from service.registry import get_organization

    config = _config(database)
    request: dict = {"apply": not dry_run, "update_existing": update_existing}
    if source.startswith(("http://", "https://")):
        request["url"] = source
    else:
        try:
            with open(source, "rb") as document:  # one byte past the bound tells it is too large
                request["document"] = document.read(MAX_IMPORT_DOCUMENT_BYTES + 1).decode("utf-8", "replace")
        except OSError as error:
            raise CannotRun(f"cannot read {source}: {error.strerror}") from None
    for name, value in (("server", server), ("subject_parameter", subject_parameter), ("project", project)):
        if value is not None:
            request[name] = value
    if operations:
        request["operations"] = list(operations)
    _open(config)
    organization = get_organization(slug)
    if organization is None:
        raise CannotRun(f"No organization {slug!r}.")
    try:
        answer = run_import(organization, request, "person:admin:cli", guard=AddressGuard(config.allowed_networks))
    except ServiceError as error:
        problems = "; ".join(f"{v.field}: {v.message}" for v in error.violations) or error.message
        raise CannotRun(problems) from None
    if as_json:
        click.echo(json.dumps(answer, indent=2))
    else:
        for note in answer["document"].get("notes") or []:
            click.echo(f"note     {note['field']}: {note['message']}")
        for operation in answer["operations"]:
            click.echo(f"{operation['status']:<8} {operation['operation']:<40} {operation.get('tool') or ''}")
            for lost in operation.get("partial") or []:
                click.echo(f"         partial {lost['field']}: {lost['message']}")
            for problem in operation.get("errors") or []:
                click.echo(f"         {problem['field']}: {problem['message']}")
            for kept in operation.get("kept") or []:
                click.echo(f"         kept {kept['field']}: {kept['message']}")
    if any(operation["status"] == "refused" for operation in answer["operations"]):
        sys.exit(1)


@cli.group()
def audit() -> None:
    """The audit trail of registry changes."""


@audit.command("verify")
@click.option("--org", "slug", help="Verify one organization's trail (default: every organization's).")
@click.option("--database", help=DATABASE_HELP)
def audit_verify(slug: str | None, database: str | None) -> None:
    """Recompute the audit hash chain; exit 1 naming the first record that was edited or removed."""
    from service.records.audit import verify
    from service.registry import get_organization

    _open(_config(database))
    organization = None
    if slug is not None:
        organization = get_organization(slug)
        if organization is None:
            raise CannotRun(f"No organization {slug!r}.")
    result = verify(organization)
    for org_slug, (seq, digest) in sorted(result.heads.items()):
        click.echo(f"{org_slug}: head #{seq} {digest}")
    if result.first_break is not None:  # not ok: spelled so the type checker knows the break
        raise click.ClickException(f"audit trail broken: {result.first_break.describe()}")
    click.echo(f"audit trail intact: {result.records} records")


@cli.group()
def calls() -> None:
    """The call log."""


@calls.command("purge")
@click.option("--days", type=float, help="Keep this many days (default: TOOLGATE_CALL_RETENTION_DAYS, or 30).")
@click.option("--batch", type=click.IntRange(1, 10_000), help="Records deleted per transaction (default 500).")
@click.option("--database", help=DATABASE_HELP)
def calls_purge(days: float | None, batch: int | None, database: str | None) -> None:
    """Delete call records past their retention, in short batches (safe while the service runs)."""
    from service.records.calls import PURGE_BATCH, purge

    config = _config(database)
    _open(config)
    retention = config.call_retention_days if days is None else days
    if retention < 0:
        raise CannotRun("--days cannot be negative.")
    click.echo(f"purged {purge(retention, batch=batch or PURGE_BATCH)} call records older than {retention:g} days")


# The mock's servers and the conformance kit are their own click commands (mock_backend/, conformance/, which import
# nothing of the service): added as they are, so `toolgate mock-backend --help` is their real help.
cli.add_command(mock_backend_command, "mock-backend")
cli.add_command(model_server_command, "model-server")
cli.add_command(conformance_group, "conformance")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module)."""
    return run(cli, argv, "toolgate", explain=cannot_run)
