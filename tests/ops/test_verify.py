"""`toolgate audit verify`: passes on an honest trail, names the first bad record after an edit or a removal."""
import pytest
from peewee import DatabaseError

from service import registry
from service.cli import main
from service.database import db, is_postgres
from service.records import audit
from service.records.tables import AuditHead, AuditRecord
from tests.support.definitions import tool


@pytest.fixture
def trail(app, keys, database_url):
    """An honest trail for acme (3 key creations, then 4 tool changes) and a second organization's."""
    with db.connection_context():
        organization = registry.get_organization("acme")
        registry.register_tool(organization, tool("get_orders"), "person:admin:k1")
        registry.save_draft(organization, "get_orders", tool("get_orders", "/v2"), "person:admin:k1")
        registry.publish_tool(organization, "get_orders", "person:admin:k1")
        registry.start_draft(organization, "get_orders", "agent:agent:k2")
    return database_url


def verify(database_url, capsys, *extra):
    status = main(["audit", "verify", "--database", database_url, *extra])
    out = capsys.readouterr()
    return status, out.out, out.err


def tamper(sql, *params):
    """Change the trail directly in the database, as someone with full rights (who can drop the trigger) would."""
    with db.connection_context():
        if is_postgres():
            db.execute_sql("DROP TRIGGER audit_record_immutable ON audit_record")
        else:
            db.execute_sql("DROP TRIGGER audit_record_immutable")
        db.execute_sql(sql.replace("?", "%s") if is_postgres() else sql, params)


def row_id(seq):
    with db.connection_context():
        return AuditRecord.get(AuditRecord.seq == seq, AuditRecord.organization == registry.get_organization("acme")).id


def test_an_honest_trail_verifies(trail, capsys):
    status, out, err = verify(trail, capsys)
    assert status == 0, err
    assert "audit trail intact: 7 records" in out
    with db.connection_context():
        head = AuditHead.get(AuditHead.organization == registry.get_organization("acme"))
    assert f"acme: head #7 {head.hash}" in out


def test_the_database_refuses_to_update_a_record(trail):
    with db.connection_context(), pytest.raises(DatabaseError):
        AuditRecord.update(actor="person:admin:forged").where(AuditRecord.seq == 5).execute()


def test_an_edited_record_is_named(trail, capsys):
    tamper("UPDATE audit_record SET actor = ? WHERE id = ?", "person:admin:forged", row_id(5))
    status, _, err = verify(trail, capsys)
    assert status == 1
    assert f"audit record #5 of acme (row id {row_id(5)}) was edited: its contents do not match its hash" in err


def test_an_edit_with_a_recomputed_hash_is_named_at_the_next_record(trail, capsys):
    with db.connection_context():
        forged = AuditRecord.get(AuditRecord.id == row_id(5))
        forged.actor = "person:admin:forged"
        forged_hash = audit.chain_hash(forged)
    tamper("UPDATE audit_record SET actor = ?, hash = ? WHERE id = ?", "person:admin:forged", forged_hash, row_id(5))
    status, _, err = verify(trail, capsys)
    assert status == 1
    assert f"audit record #6 of acme (row id {row_id(6)}) does not carry the hash of record #5" in err


def test_a_removed_record_is_named(trail, capsys):
    tamper("DELETE FROM audit_record WHERE id = ?", row_id(4))
    status, _, err = verify(trail, capsys)
    assert status == 1
    assert "audit record #4 of acme is missing: the trail goes from #3 to #5" in err


def test_a_removed_last_record_is_named(trail, capsys):
    tamper("DELETE FROM audit_record WHERE id = ?", row_id(7))
    status, _, err = verify(trail, capsys)
    assert status == 1
    assert "audit record #7 of acme is missing: the chain head says the trail ends at #7" in err


def test_one_organization_can_be_verified_alone(trail, capsys, config):
    from tests.support.definitions import make_org

    make_org(config, "globex")
    tamper("DELETE FROM audit_record WHERE id = ?", row_id(2))
    status, out, _ = verify(trail, capsys, "--org", "globex")
    assert status == 0 and "audit trail intact: 3 records" in out
    assert verify(trail, capsys, "--org", "acme")[0] == 1
    assert verify(trail, capsys, "--org", "nobody")[0] == 2  # an argument it cannot run with (issue 30)


def test_a_record_forged_onto_the_end_is_named(trail, capsys):
    with db.connection_context():
        organization = registry.get_organization("acme")
        last = AuditRecord.get(AuditRecord.organization == organization, AuditRecord.seq == 7)
        forged = AuditRecord(organization=organization.id, seq=8, created_at=last.created_at, actor="person:admin:x",
                             action="publish", object_type="tool", object_name="get_orders", object_version=9,
                             prev_hash=last.hash)
        forged.hash = audit.chain_hash(forged)  # a perfect link; only the chain head was not moved
        forged.save(force_insert=True)
        forged_id = forged.id
    status, _, err = verify(trail, capsys)
    assert status == 1
    assert f"audit record #8 of acme (row id {forged_id}) was not appended through the chain head" in err
