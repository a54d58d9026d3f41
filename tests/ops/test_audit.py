"""The audit trail: every registry change records its actor, time, object and state hashes, chained."""
import time

import gevent

from service import registry
from service.database import db, write_transaction
from service.records import audit
from service.records.tables import AuditRecord
from tests.support.definitions import key_id, tool

ORDERS = tool("get_orders", "/users/{subject}/orders", scope="per_user",
              parameters=[{"name": "subject", "type": "string", "location": "path"}])


def trail(api):
    """Every record of the caller's organization, oldest first."""
    return list(reversed(api("GET", "/v1/audit?limit=500").json["records"]))


def definition(api, version=None):
    if version is None:
        return api("GET", "/v1/tools/get_orders").json["draft"]["definition"]
    return api("GET", f"/v1/tools/get_orders/versions/{version}").json["definition"]


def test_every_registry_change_is_recorded_with_its_actor_object_and_hashes(api, keys, app):
    agent = keys["agent"]
    started = time.time()
    assert api("POST", "/v1/tools", ORDERS, key=agent).status_code == 201
    registered = definition(api)
    assert api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "description": "Orders, newest first."},
               key=agent).status_code == 200
    saved = definition(api)
    assert api("PATCH", "/v1/tools/get_orders", {"display_name": "Customer orders"}).status_code == 200
    assert api("POST", "/v1/tools/get_orders/publish").status_code == 201
    assert api("POST", "/v1/tools/get_orders/draft", key=agent).status_code == 201
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    pins = [{"tool": "get_orders", "version": "draft"}]
    assert api("PUT", "/v1/projects/shop/draft", {"pins": pins}).status_code == 200
    assert api("POST", "/v1/projects/shop/publish").status_code == 201
    assert api("POST", "/v1/keys/rotate").status_code == 201
    with app.app_context(), db.connection_context():
        new_key = registry.create_api_key(registry.get_organization("acme"), "agent", "ci", actor="person:admin:k1")

    records = trail(api)
    assert [r["action"] for r in records] == [
        "api-key-create", "api-key-create", "api-key-create",  # the organization's first keys, made at the CLI
        "register", "save", "relabel", "publish", "start-draft", "project-create", "project-pin",
        "publish", "project-publish", "key-rotate", "api-key-create"]
    by_action = {}
    for r in records:
        by_action.setdefault(r["action"], []).append(r)
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert all(later["prev_hash"] == earlier["hash"] for earlier, later in zip(records, records[1:]))
    assert records[0]["prev_hash"] == audit.GENESIS
    assert all(started - 1 <= r["at"] <= time.time() + 1 for r in records[3:])

    register, save = by_action["register"][0], by_action["save"][0]
    assert register["actor"] == {"kind": "agent", "role": "agent", "key_id": key_id(agent)}
    assert register["object"] == {"type": "tool", "name": "get_orders", "version": None}
    assert (register["before_hash"], register["after_hash"]) == (None, audit.state_hash(registered))
    assert (save["before_hash"], save["after_hash"]) == (audit.state_hash(registered), audit.state_hash(saved))
    relabel = by_action["relabel"][0]
    assert relabel["actor"] == {"kind": "person", "role": "admin", "key_id": key_id(keys["admin"])}
    assert relabel["after_hash"] == audit.state_hash({"display_name": "Customer orders"})
    first, second = by_action["publish"]
    assert first["object"]["version"] == 1 and second["object"]["version"] == 2
    assert (first["before_hash"], first["after_hash"]) == (None, audit.state_hash(definition(api, 1)))
    assert second["before_hash"] == first["after_hash"]  # the draft was published unchanged
    assert by_action["start-draft"][0]["actor"]["kind"] == "agent"
    project = by_action["project-publish"][0]
    assert project["object"] == {"type": "project", "name": "shop", "version": 1}
    assert project["before_hash"] == audit.state_hash([{"tool": "get_orders", "version": "draft"}])
    assert project["after_hash"] == audit.state_hash([{"tool": "get_orders", "version": 2}])
    assert by_action["key-rotate"][0]["object"]["type"] == "signing-key"
    created = by_action["api-key-create"]
    assert created[0]["actor"] == {"kind": "person", "role": "operator", "key_id": "cli"}
    assert created[-1]["object"]["name"] == key_id(new_key)
    assert created[-1]["actor"] == {"kind": "person", "role": "admin", "key_id": "k1"}
    # Only the key's public id is hashed: its secret appears in no record.
    assert all(new_key.split("_", 2)[2] not in str(r) for r in records)


def test_a_refused_write_records_nothing(api, keys):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    before = trail(api)
    assert api("POST", "/v1/tools", ORDERS).status_code == 409  # the name is taken
    assert api("POST", "/v1/tools/get_orders/publish", key=keys["agent"]).status_code == 403
    assert api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "method": "TRACE"}).status_code == 422
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    # A project whose pinned draft breaks a rule at publish time publishes nothing and records nothing.
    assert api("PUT", "/v1/projects/shop/draft", {"pins": [{"tool": "get_orders", "version": 7}]}).status_code == 422
    assert [r["action"] for r in trail(api)] == [r["action"] for r in before] + ["project-create"]


def test_the_trail_and_history_are_per_organization_and_filterable(api, other_api):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    assert api("POST", "/v1/tools", tool("get_stock")).status_code == 201
    assert api("POST", "/v1/tools/get_orders/publish").status_code == 201
    assert [r["action"] for r in trail(other_api)] == ["api-key-create"] * 3
    only_orders = api("GET", "/v1/audit?object_type=tool&object=get_orders").json["records"]
    assert [r["action"] for r in only_orders] == ["publish", "register"]
    history = api("GET", "/v1/tools/get_orders/history").json
    assert [r["action"] for r in history["records"]] == ["publish", "register"]
    assert [v["version"] for v in history["versions"]] == [1]
    assert other_api("GET", "/v1/tools/get_orders/history").status_code == 404
    page = api("GET", "/v1/audit?limit=2").json
    assert len(page["records"]) == 2
    rest = api("GET", f"/v1/audit?limit=500&before={page['next']}").json["records"]
    assert [r["seq"] for r in page["records"] + rest] == list(range(6, 0, -1))


def test_concurrent_writers_never_fork_the_chain(app, keys):
    racers = 10

    def write(i):
        with db.connection_context():
            organization = registry.get_organization("acme")
            registry.register_tool(organization, tool(f"tool_{i}"), f"agent:agent:k{i}")
            registry.save_draft(organization, f"tool_{i}", tool(f"tool_{i}", "/y"), f"agent:agent:k{i}")

    greenlets = [gevent.spawn(write, i) for i in range(racers)]
    gevent.joinall(greenlets, raise_error=True)  # every write succeeded: appends waited, none collided
    with db.connection_context():
        organization = registry.get_organization("acme")
        seqs = [r.seq for r in AuditRecord.select().where(AuditRecord.organization == organization)
                .order_by(AuditRecord.seq)]
        assert seqs == list(range(1, 3 + 2 * racers + 1))
        result = audit.verify(organization)
    assert result.ok and result.records == len(seqs)


def test_a_record_of_any_text_is_chained_as_verify_recomputes_it(app, keys):
    """On PostgreSQL the server hashes the record (one statement holds the head): over the bytes `chain_hash` makes,
    whatever the text holds (quotes, backslashes, letters beyond ASCII)."""
    with db.connection_context():
        organization = registry.get_organization("acme")
        with write_transaction():
            row = audit.record(organization, 'person:admin:k\u00c9y "q" \\ \u2713', audit.RELABEL, audit.TOOL,
                               'to\u00f8l_"x"\\', version=3, after={"display_name": "Zo\u00eb \u2713"})
        stored = AuditRecord.get_by_id(row.id)
        assert (stored.seq, stored.prev_hash, stored.hash) == (row.seq, row.prev_hash, row.hash)
        assert stored.hash == audit.chain_hash(stored) and stored.seq > 1
        assert audit.verify(organization).ok
