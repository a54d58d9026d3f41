"""The `toolgate` command as outside clients use it: a real process, JSON on stdout."""
import json
import os
import subprocess
import sys
from pathlib import Path

TOOLGATE = str(Path(sys.executable).with_name("toolgate"))


def toolgate(*args, env=None, check=True):
    result = subprocess.run([TOOLGATE, *args], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "TOOLGATE_SECRET_KEY": "cli-test-secret", **(env or {})})
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_org_and_key_creation_print_the_contracts_json(tmp_path):
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    assert "applied: 0001_registry" in toolgate("migrate", "--database", database).stdout
    env = {"TOOLGATE_PUBLIC_URL": "https://tools.example.com"}
    created = json.loads(toolgate("org", "create", "acme", "--json", "--database", database, env=env).stdout)
    assert set(created) == {"org", "issuer", "admin_key"}
    assert created["issuer"] == "https://tools.example.com/orgs/acme"
    key = json.loads(toolgate("key", "create", "--org", "acme", "--role", "agent", "--json",
                              "--database", database).stdout)
    assert set(key) == {"key", "role"} and key["role"] == "agent" and key["key"] != created["admin_key"]
    again = toolgate("org", "create", "acme", "--json", "--database", database, check=False)
    assert again.returncode != 0 and "already exists" in again.stderr


def test_serve_refuses_a_database_whose_schema_is_behind(tmp_path):
    result = toolgate("serve", "--port", "0", "--database", f"sqlite:///{tmp_path / 'empty.db'}", check=False)
    assert result.returncode != 0
    assert "toolgate migrate" in result.stderr


def test_key_create_for_an_unknown_organization_fails_clearly(tmp_path):
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    toolgate("migrate", "--database", database)
    result = toolgate("key", "create", "--org", "nobody", "--role", "admin", "--database", database, check=False)
    assert result.returncode != 0 and "nobody" in result.stderr


def test_importing_the_service_package_imports_nothing_gevent_must_patch_first():
    """`python -m service.entry` imports `service` before entry's first line patches gevent: a database driver or
    peewee imported there would keep real thread-locals, and every greenlet of a worker would share one connection."""
    probe = ("import sys, service, service.config, service.limits, service.errors\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('peewee', 'playhouse', 'psycopg2', 'gevent', 'requests', 'urllib3', 'flask', 'jwt')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
