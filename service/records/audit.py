"""The audit trail: every registry change, who made it, and a hash chain that shows when a record was tampered with.

Each record holds the actor (which API key, its role, person or agent), the time, the object, and hashes of the
object's state before and after. Its own hash is SHA-256 over the canonical JSON of those fields plus the previous
record's hash, so editing or removing a record breaks the chain where it happened, and `verify` names that record.

`record` runs inside the registry's own write transaction, as its last statement: the change and its record commit
together or not at all. Appends lock the organization's chain head (`SELECT … FOR UPDATE` on PostgreSQL; SQLite
already serializes writers), and the head moves with the record (on SQLite by a conditional UPDATE; on PostgreSQL in
the statement that locked it, below), so concurrent writers never fork the chain.
Taking that lock last keeps it out of any lock-order cycle with the rows the write itself touched.

On PostgreSQL the lock, the record and the head's move are one statement (`_APPEND_SQL`, the record's hash made by
the server's sha256 over the same canonical bytes): the head is held from that statement to the commit, one round trip
and not three. Under gevent every round trip lets the process's other requests run first, so each one held the lock
for their CPU too, and concurrent registrations queued on it (bench/JOURNAL.md, issue 38).
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from service.database import db, is_postgres
from service.limits import MAX_PAGE
from service.models import Organization
from service.records import metrics
from service.records.tables import AuditHead, AuditRecord

#: The `prev_hash` of an organization's first record.
GENESIS = "0" * 64

#: Who a change made from the `toolgate` command line is recorded as: a person, with no API key.
CLI_ACTOR = "person:operator:cli"

# Actions, named as the registry names its writes.
REGISTER, SAVE, PUBLISH, START_DRAFT, RELABEL = "register", "save", "publish", "start-draft", "relabel"
PROJECT_CREATE, PROJECT_PIN = "project-create", "project-pin"
PROJECT_START_DRAFT, PROJECT_PUBLISH = "project-start-draft", "project-publish"
#: A publish moved a project draft's pin of the published tool draft to the version it became.
PROJECT_REPIN = "project-repin"
KEY_ROTATE, API_KEY_CREATE = "key-rotate", "api-key-create"
#: One import of an OpenAPI document: every draft it wrote, as one record (its `after` names them all).
IMPORT = "import"
#: An organization's trust in its own identity provider added, changed or removed (service/identity).
PROVIDER_ADD, PROVIDER_CHANGE, PROVIDER_REMOVE = "provider-add", "provider-change", "provider-remove"
ACTIONS = (REGISTER, SAVE, PUBLISH, START_DRAFT, RELABEL, PROJECT_CREATE, PROJECT_PIN, PROJECT_START_DRAFT,
           PROJECT_PUBLISH, PROJECT_REPIN, KEY_ROTATE, API_KEY_CREATE, IMPORT, PROVIDER_ADD, PROVIDER_CHANGE,
           PROVIDER_REMOVE)

# Objects.
TOOL, PROJECT, SIGNING_KEY, API_KEY = "tool", "project", "signing-key", "api-key"
OPENAPI_DOCUMENT = "openapi-document"
#: object_type is at most 16 characters (migration 0003).
IDENTITY_PROVIDER = "provider"
OBJECT_TYPES = (TOOL, PROJECT, SIGNING_KEY, API_KEY, OPENAPI_DOCUMENT, IDENTITY_PROVIDER)



def canonical(value: Any) -> bytes:
    """The one byte form hashed everywhere: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def state_hash(state: Any) -> str | None:
    """SHA-256 of an object's state (a definition, a list of pins, …); None when there is no state."""
    return None if state is None else hashlib.sha256(canonical(state)).hexdigest()


def chain_hash(row: AuditRecord) -> str:
    """The hash a record must carry: its fields and the previous record's hash, canonically."""
    return hashlib.sha256(canonical(_payload(row))).hexdigest()


def _payload(row: AuditRecord) -> dict[str, Any]:
    return {
        "organization": row.organization_id, "seq": row.seq, "at": f"{row.created_at:.6f}",
        "actor": row.actor, "action": row.action, "object_type": row.object_type, "object_name": row.object_name,
        "object_version": row.object_version, "before": row.before_hash, "after": row.after_hash,
        "prev": row.prev_hash,
    }


@dataclass(frozen=True)
class Actor:
    """An actor string taken apart: person or agent, the key's role, the key's public id."""

    kind: str
    role: str
    key_id: str

    @classmethod
    def parse(cls, actor: str) -> "Actor":
        kind, _, rest = actor.partition(":")
        role, _, key_id = rest.partition(":")
        return cls(kind, role, key_id)


def _lock_head(organization_id: int) -> AuditHead:
    """SQLite: the head, which the write transaction already holds alone (PostgreSQL's append is `_APPEND_SQL`)."""
    AuditHead.insert(organization=organization_id, seq=0, hash=GENESIS).on_conflict_ignore().execute()
    return AuditHead.get(AuditHead.organization == organization_id)


def record(organization: Organization, actor: str, action: str, object_type: str, object_name: str, *,
           version: int | None = None, before: Any = None, after: Any = None) -> AuditRecord:
    """Append one change to the organization's trail, inside the caller's write transaction.

    `before` and `after` are the object's states (stored only as hashes); None means it had none.
    """
    if not db.in_transaction():
        raise RuntimeError("audit.record must run inside the write transaction of the change it records")
    row = AuditRecord(organization=organization.id, created_at=round(time.time(), 6),
                      actor=actor, action=action, object_type=object_type, object_name=object_name,
                      object_version=version, before_hash=state_hash(before), after_hash=state_hash(after))
    if is_postgres():
        _append_in_one_statement(row)
    else:
        head = _lock_head(organization.id)
        row.seq, row.prev_hash = head.seq + 1, head.hash
        row.hash = chain_hash(row)
        row.save(force_insert=True)
        _move_head(row, head.seq)
    metrics.registry_write(organization.slug, action)
    return row


def _move_head(row: AuditRecord, was: int) -> None:
    moved = (AuditHead.update(seq=row.seq, hash=row.hash)
             .where(AuditHead.organization == row.organization_id, AuditHead.seq == was).execute())
    if moved != 1:  # cannot happen while the head is locked; refuse rather than fork the chain
        raise RuntimeError("the audit chain head moved during an append")


#: PostgreSQL: lock the head, insert the record chained onto it and move the head, in one statement. `prefix` is the
#: record's canonical payload up to its last two members, which sort last ("prev", then "seq"): the server completes
#: it with the head's hash and next seq, so the bytes hashed are those `chain_hash` makes (`verify` recomputes them).
_APPEND_SQL = """
WITH head AS (SELECT seq, hash FROM audit_head WHERE organization_id = %(organization)s FOR UPDATE),
link AS (SELECT head.seq + 1 AS seq, head.hash AS prev, encode(sha256(convert_to(
           %(prefix)s || '"prev":"' || head.hash || '","seq":' || (head.seq + 1) || '}', 'UTF8')), 'hex') AS hash
         FROM head),
appended AS (
  INSERT INTO audit_record (organization_id, seq, created_at, actor, action, object_type, object_name,
                            object_version, before_hash, after_hash, prev_hash, hash)
  SELECT %(organization)s, link.seq, %(created_at)s, %(actor)s, %(action)s, %(object_type)s, %(object_name)s,
         %(object_version)s, %(before_hash)s, %(after_hash)s, link.prev, link.hash FROM link
  RETURNING id, seq, prev_hash, hash)
UPDATE audit_head SET seq = (SELECT seq FROM appended), hash = (SELECT hash FROM appended)
WHERE organization_id = %(organization)s
RETURNING (SELECT id FROM appended), seq, (SELECT prev_hash FROM appended), hash"""


def _append_in_one_statement(row: AuditRecord) -> None:
    row.seq, row.prev_hash = 0, ""  # placeholders: the payload below leaves both out
    whole = canonical(_payload(row))
    tail = b',"prev":"","seq":0}'
    if not whole.endswith(tail):  # the two members no longer sort last: the server would hash other bytes
        raise RuntimeError("the audit payload's last members are not prev and seq")
    prefix = whole[:-len(tail)].decode("utf-8") + ","
    values = {
        "organization": row.organization_id, "prefix": prefix, "created_at": row.created_at, "actor": row.actor,
        "action": row.action, "object_type": row.object_type, "object_name": row.object_name,
        "object_version": row.object_version, "before_hash": row.before_hash, "after_hash": row.after_hash,
    }
    appended = db.execute_sql(_APPEND_SQL, values).fetchone()
    if appended is None:
        # The organization's first record: no head yet. Two first writers both insert it: one row wins, the other
        # statement does nothing, and both append after it (the second waits for the first's commit).
        AuditHead.insert(organization=row.organization_id, seq=0, hash=GENESIS).on_conflict_ignore().execute()
        appended = db.execute_sql(_APPEND_SQL, values).fetchone()
    if appended is None:  # cannot happen once the head exists; refuse rather than fork the chain
        raise RuntimeError("the audit chain head moved during an append")
    row.id, row.seq, row.prev_hash, row.hash = appended


def history(organization: Organization, *, object_type: str | None = None, object_name: str | None = None,
            action: str | None = None, before_seq: int | None = None, limit: int = 100) -> list[AuditRecord]:
    """The organization's records, newest first, optionally for one object or action; page with `before_seq`."""
    limit = max(1, min(limit, MAX_PAGE + 1))  # one past a page: whether another follows
    query = AuditRecord.select().where(AuditRecord.organization == organization)
    if object_type is not None:
        query = query.where(AuditRecord.object_type == object_type)
    if object_name is not None:
        query = query.where(AuditRecord.object_name == object_name)
    if action is not None:
        query = query.where(AuditRecord.action == action)
    if before_seq is not None:
        query = query.where(AuditRecord.seq < before_seq)
    return list(query.order_by(AuditRecord.seq.desc()).limit(limit))


def record_view(row: AuditRecord) -> dict[str, Any]:
    """A record as the API and the dashboard show it."""
    actor = Actor.parse(row.actor)
    return {
        "seq": row.seq, "at": row.created_at, "action": row.action,
        "actor": {"kind": actor.kind, "role": actor.role, "key_id": actor.key_id},
        "object": {"type": row.object_type, "name": row.object_name, "version": row.object_version},
        "before_hash": row.before_hash, "after_hash": row.after_hash, "prev_hash": row.prev_hash, "hash": row.hash,
    }


@dataclass(frozen=True)
class Break:
    """The first record at which an organization's chain does not hold."""

    organization: str
    seq: int
    record_id: int | None  # None: the record is missing
    problem: str

    def describe(self) -> str:
        where = f" (row id {self.record_id})" if self.record_id is not None else ""
        return f"audit record #{self.seq} of {self.organization}{where} {self.problem}"


@dataclass(frozen=True)
class Verification:
    """What `verify` found: how many records it checked, each chain's head, and the first break if any."""

    records: int
    heads: dict[str, tuple[int, str]]
    first_break: Break | None

    @property
    def ok(self) -> bool:
        return self.first_break is None


def verify(organization: Organization | None = None) -> Verification:
    """Walk every organization's chain (or one), recomputing each hash; stop at the first break."""
    if organization is not None:
        organizations = [organization]
    else:
        organizations = list(Organization.select().order_by(Organization.id))
    total, heads = 0, {}
    for org in organizations:
        count, head, found = _verify_one(org)
        total += count
        if head is not None:
            heads[org.slug] = head
        if found is not None:
            return Verification(total, heads, found)
    return Verification(total, heads, None)


def _link_problem(row: AuditRecord, expected: int, previous: str) -> tuple[int, int | None, str] | None:
    """What is wrong with `row` as record #`expected` following a record whose hash is `previous`, if anything."""
    if row.seq != expected:
        return expected, None, f"is missing: the trail goes from #{expected - 1} to #{row.seq}"
    if chain_hash(row) != row.hash:
        return row.seq, row.id, "was edited: its contents do not match its hash"
    if row.prev_hash != previous:
        return row.seq, row.id, f"does not carry the hash of record #{expected - 1}: one was rewritten"
    return None


def _verify_one(org: Organization) -> tuple[int, tuple[int, str] | None, Break | None]:
    """Records checked, the chain head (seq, hash) if any, and the first break if any."""
    count, previous, last = 0, GENESIS, None
    rows = AuditRecord.select().where(AuditRecord.organization == org).order_by(AuditRecord.seq)
    for row in rows.iterator():
        problem = _link_problem(row, count + 1, previous)
        if problem is not None:
            return count, None, Break(org.slug, *problem)
        count, previous, last = row.seq, row.hash, row
    head = AuditHead.get_or_none(AuditHead.organization == org)
    if head is None or head.seq == 0:
        if last is None:
            return 0, None, None
        return count, None, Break(org.slug, 1, rows.first().id, "was not appended through the chain head")
    found = (head.seq, head.hash)
    if head.seq > count:
        return count, found, Break(org.slug, count + 1, None,
                                   f"is missing: the chain head says the trail ends at #{head.seq}")
    if head.seq < count:
        extra = AuditRecord.get(AuditRecord.organization == org, AuditRecord.seq == head.seq + 1)
        return count, found, Break(org.slug, extra.seq, extra.id, "was not appended through the chain head")
    assert last is not None  # head.seq == count > 0: the last record was read
    if head.hash != last.hash:
        return count, found, Break(org.slug, last.seq, last.id, "does not match the chain head: it was rewritten")
    return count, found, None
