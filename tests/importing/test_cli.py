"""`toolgate tools import FILE|URL --org … [--dry-run]`: the same import as the API, from the command line."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from service.catalogue import RULES
from tests.importing.test_reimport import shop
from tests.support.databases import migrated_sqlite

TOOLGATE = str(Path(sys.executable).with_name("toolgate"))
DOCUMENTS = Path(__file__).with_name("documents")
#: The operations of petstore.yaml a dry run finds ready, and the import makes a draft of.
PETSTORE_READY = sorted(["listPets", "createPets", "showPetById", "updatePet", "deletePet"])


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


@pytest.fixture(scope="module")
def with_pets(tmp_path_factory):
    """A migrated SQLite database holding the organization `pets`, made by `toolgate org create` once; each test
    copies it (`pets_database`)."""
    database = migrated_sqlite(tmp_path_factory.mktemp("import") / "pets.db")
    toolgate("org", "create", "pets", database=database)
    return Path(database.removeprefix("sqlite:///"))


@pytest.fixture
def pets_database(with_pets, tmp_path):
    copy = tmp_path / "import.db"
    shutil.copyfile(with_pets, copy)
    return f"sqlite:///{copy}"


def test_a_dry_run_lists_each_operation_and_writes_nothing(pets_database):
    preview = json.loads(toolgate("tools", "import", str(DOCUMENTS / "petstore.yaml"), "--org", "pets",
                                  "--dry-run", "--json", database=pets_database).stdout)
    assert sorted(op["tool"] for op in preview["operations"] if op["status"] == "ready") == PETSTORE_READY
    assert [(op["tool"], op["status"]) for op in preview["operations"] if op["status"] != "ready"] == \
        [("petExists", "skipped")]  # HEAD: not a method a tool can have
    assert drafts(pets_database) == []


def test_the_import_writes_a_draft_of_each_operation_the_dry_run_finds_ready(pets_database):
    imported = toolgate("tools", "import", str(DOCUMENTS / "petstore.yaml"), "--org", "pets", database=pets_database)
    created = sorted(line.split()[-1] for line in imported.stdout.splitlines() if line.startswith("created "))
    assert created == drafts(pets_database) == PETSTORE_READY


def test_a_document_that_cannot_be_read_or_an_unknown_org_is_refused_in_one_line(pets_database, tmp_path):
    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("swagger: '2.0'\npaths: {}\n")
    refused = toolgate("tools", "import", str(garbage), "--org", "pets", database=pets_database, check=False)
    assert refused.returncode == 2 and "Swagger 2.0 is not supported" in refused.stderr
    unknown = toolgate("tools", "import", str(garbage), "--org", "nobody", database=pets_database, check=False)
    assert unknown.returncode == 2 and "No organization 'nobody'" in unknown.stderr
    assert drafts(pets_database) == []


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
    unmarked.write_text(shop("false"))  # marked false: the person's approval differs, and is kept
    subprocess.run([sys.executable, "-c", PUBLISHED, database, str(marked)], check=True, timeout=60,
                   env={**os.environ, "TOOLGATE_SECRET_KEY": "cli-import-test"})

    preview = toolgate("tools", "import", str(unmarked), "--org", "shop", "--update-existing", "--dry-run",
                       database=database).stdout.splitlines()

    assert preview[0].split() == ["ready", "POST", "/orders", "placeOrder"]
    assert preview[1:] == [f"         kept requires_approval: {RULES['approval-kept']}"]
