"""`toolgate tools import FILE|URL --org … [--dry-run]`: the same import as the API, from the command line."""
import json
import os
import subprocess
import sys
from pathlib import Path

from service.registry.rules import RULES
from tests.helpers import migrated_sqlite
from tests.importing.test_reimport import shop

TOOLGATE = str(Path(sys.executable).with_name("toolgate"))
DOCUMENTS = Path(__file__).with_name("documents")


def toolgate(*args, database, check=True):
    result = subprocess.run([TOOLGATE, *args, "--database", database], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "TOOLGATE_SECRET_KEY": "cli-import-test"})
    if check:
        assert result.returncode == 0, result.stderr
    return result


def drafts(database):
    from service.database import make_database

    db = make_database(database, pooled=False)
    with db.connection_context():
        return sorted(row[0] for row in db.execute_sql(
            "SELECT t.name FROM tool t JOIN tool_draft d ON d.tool_id = t.id"))


def test_a_dry_run_lists_each_operation_and_writes_nothing_then_the_import_writes_drafts(tmp_path):
    database = migrated_sqlite(tmp_path / "import.db")  # `toolgate migrate` is tested in tests/test_cli.py
    toolgate("org", "create", "pets", database=database)
    preview = json.loads(toolgate("tools", "import", str(DOCUMENTS / "petstore.yaml"), "--org", "pets",
                                  "--dry-run", "--json", database=database).stdout)
    ready = sorted(op["tool"] for op in preview["operations"] if op["status"] == "ready")
    assert ready and {op["status"] for op in preview["operations"]} <= {"ready", "skipped", "refused"}
    assert drafts(database) == []
    imported = toolgate("tools", "import", str(DOCUMENTS / "petstore.yaml"), "--org", "pets", database=database)
    assert drafts(database) == ready
    created = sorted(line.split()[-1] for line in imported.stdout.splitlines() if line.startswith("created "))
    assert created == ready


def test_a_document_that_cannot_be_read_or_an_unknown_org_is_refused_in_one_line(tmp_path):
    database = migrated_sqlite(tmp_path / "import.db")
    toolgate("org", "create", "pets", database=database)
    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("swagger: '2.0'\npaths: {}\n")
    refused = toolgate("tools", "import", str(garbage), "--org", "pets", database=database, check=False)
    assert refused.returncode == 1 and "Swagger 2.0 is not supported" in refused.stderr
    unknown = toolgate("tools", "import", str(garbage), "--org", "nobody", database=database, check=False)
    assert unknown.returncode == 1 and "No organization 'nobody'" in unknown.stderr
    assert drafts(database) == []


#: A published tool imported from a document marked consequential, made in one process of its own: the `migrate`,
#: `org create` and `tools import` commands are each proven above, and the CLI has no publish command.
PUBLISHED = ("import sys\nfrom service.config import Config\nfrom service.database import open_database\n"
             "from service.dispatch import AddressGuard\nfrom service.importing import run_import\n"
             "from service.provisioning import create_organization_with_keys\n"
             "from service.registry import get_organization\nfrom service.registry.tools import publish_tool\n"
             "url, document = sys.argv[1], open(sys.argv[2]).read()\nopen_database(url).connect()\n"
             "create_organization_with_keys(Config(database_url=url, secret_key='cli-import-test'), 'shop')\n"
             "shop = get_organization('shop')\n"
             "run_import(shop, {'document': document, 'apply': True}, 'person:admin:test', "
             "guard=AddressGuard(('127.0.0.0/8',)))\n"
             "publish_tool(shop, 'placeOrder', 'person:admin:test')\n")


def test_a_dry_run_re_import_says_what_it_keeps_of_the_existing_tool(tmp_path):
    database = migrated_sqlite(tmp_path / "import.db")
    marked, unmarked = tmp_path / "marked.yaml", tmp_path / "unmarked.yaml"
    marked.write_text(shop("true"))
    unmarked.write_text(shop())
    subprocess.run([sys.executable, "-c", PUBLISHED, database, str(marked)], check=True, timeout=60,
                   env={**os.environ, "TOOLGATE_SECRET_KEY": "cli-import-test"})

    preview = toolgate("tools", "import", str(unmarked), "--org", "shop", "--update-existing", "--dry-run",
                       database=database).stdout.splitlines()

    assert preview[0].split() == ["ready", "POST", "/orders", "placeOrder"]
    assert preview[1:] == [f"         kept requires_approval: {RULES['approval-kept']}"]
