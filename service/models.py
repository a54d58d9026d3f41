"""peewee models: the tables, and nothing else.

The schema itself is created by the numbered migrations in `service/migrations`; these classes only map rows.
Uniqueness and immutability are enforced by the database (unique indexes, triggers that refuse updates of published
rows), not only by the code.
"""
from __future__ import annotations

import json
import time

from peewee import (
    AutoField,
    BooleanField,
    CharField,
    DoubleField,
    ForeignKeyField,
    IntegerField,
    Model,
    ModelSelect,
    TextField,
)

from service.database import db


def now() -> float:
    return time.time()


class JSONField(TextField):
    """JSON stored as text: portable across SQLite and PostgreSQL, compared as written."""

    def db_value(self, value):
        return None if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"))

    def python_value(self, value):
        return None if value is None else json.loads(value)


# Each model names its `id` and the `<foreign key>_id` and backrefs the code reads (as annotations, which peewee
# ignores), so the type checker knows them; peewee would add the same `id` itself.
class BaseModel(Model):
    class Meta:
        database = db
        legacy_table_names = False


class Organization(BaseModel):
    id = AutoField()
    slug = CharField(unique=True)
    algorithm = CharField(default="ES256")
    created_at = DoubleField(default=now)


class ApiKey(BaseModel):
    id = AutoField()
    organization = ForeignKeyField(Organization, backref="api_keys", on_delete="CASCADE")
    #: The public half of the key, used to find the row; the secret half is only ever hashed.
    key_id = CharField(unique=True)
    secret_hash = CharField()
    role = CharField()
    label = CharField(default="")
    created_at = DoubleField(default=now)
    revoked_at = DoubleField(null=True)


class SigningKeyRow(BaseModel):
    id = AutoField()
    organization = ForeignKeyField(Organization, backref="signing_keys", on_delete="CASCADE")
    kid = CharField(unique=True)
    alg = CharField()
    sealed_private_key = TextField()
    created_at = DoubleField()
    retired_at = DoubleField(null=True)
    #: Published in the JWKS but not signing yet: the next rotation promotes it, so verifiers
    #: have had it for a whole cache lifetime before it signs anything.
    standby = BooleanField(default=False)

    class Meta:
        table_name = "signing_key"


class Project(BaseModel):
    id = AutoField()
    organization = ForeignKeyField(Organization, backref="projects", on_delete="CASCADE")
    organization_id: int
    #: Its published versions (ProjectVersion's backref).
    versions: ModelSelect[ProjectVersion]
    name = CharField()
    created_at = DoubleField(default=now)

    class Meta:
        indexes = ((("organization", "name"), True),)


class Tool(BaseModel):
    id = AutoField()
    organization = ForeignKeyField(Organization, backref="tools", on_delete="CASCADE")
    #: Unique across the organization, org-wide and project tools alike; never changes.
    name = CharField()
    display_name = CharField()
    project = ForeignKeyField(Project, null=True, backref="own_tools", on_delete="RESTRICT")
    project_id: int | None
    #: Its published versions (ToolVersion's backref).
    versions: ModelSelect[ToolVersion]
    created_at = DoubleField(default=now)
    #: The draft this instance's creation wrote, on the instance that created it (registry.tools.tool_view).
    new_draft: "ToolDraft | None" = None

    class Meta:
        indexes = ((("organization", "name"), True),)


class ToolDraft(BaseModel):
    """The one draft of a tool, saved in place. `revision` grows on every save and backs the ETag."""

    id = AutoField()
    tool = ForeignKeyField(Tool, unique=True, backref="drafts", on_delete="CASCADE")
    tool_id: int
    definition = JSONField()
    revision = IntegerField(default=1)
    based_on = IntegerField(null=True)  # the published version it was copied from
    updated_at = DoubleField(default=now)
    updated_by = CharField(default="")


class ToolVersion(BaseModel):
    """A published, immutable version. A database trigger refuses any update."""

    id = AutoField()
    tool = ForeignKeyField(Tool, backref="versions", on_delete="CASCADE")
    tool_id: int
    number = IntegerField()
    definition = JSONField()
    published_at = DoubleField(default=now)
    published_by = CharField(default="")

    class Meta:
        indexes = ((("tool", "number"), True),)


class ProjectDraft(BaseModel):
    id = AutoField()
    project = ForeignKeyField(Project, unique=True, backref="drafts", on_delete="CASCADE")
    project_id: int
    #: [{"tool": name, "version": N or "draft"}]
    pins = JSONField()
    revision = IntegerField(default=1)
    updated_at = DoubleField(default=now)
    updated_by = CharField(default="")


class ProjectVersion(BaseModel):
    id = AutoField()
    project = ForeignKeyField(Project, backref="versions", on_delete="CASCADE")
    project_id: int
    number = IntegerField()
    published_at = DoubleField(default=now)
    published_by = CharField(default="")
    #: The tool versions it pins (Pin's backref).
    pins: ModelSelect[Pin]

    class Meta:
        indexes = ((("project", "number"), True),)


class Pin(BaseModel):
    """One published tool version pinned by one published project version."""

    id = AutoField()
    project_version = ForeignKeyField(ProjectVersion, backref="pins", on_delete="CASCADE")
    tool_version = ForeignKeyField(ToolVersion, backref="pinned_by", on_delete="RESTRICT")
    tool_version_id: int
    tool = ForeignKeyField(Tool, on_delete="RESTRICT")

    class Meta:
        indexes = ((("project_version", "tool"), True),)


REGISTRY_MODELS = [
    Organization,
    ApiKey,
    SigningKeyRow,
    Project,
    Tool,
    ToolDraft,
    ToolVersion,
    ProjectDraft,
    ProjectVersion,
    Pin,
]


class Conversation(BaseModel):
    """A conversation, visible only to the subject whose session token opened it."""

    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    project = ForeignKeyField(Project, on_delete="CASCADE")
    organization_id: int
    project_id: int
    #: The pinned project version; null while the conversation runs on the project's draft.
    project_version = ForeignKeyField(ProjectVersion, null=True, on_delete="CASCADE")
    project_version_id: int | None
    subject = CharField()
    anonymous = BooleanField()
    #: The session-start context: [{"tool", "description", "authoritative", "output" | "error"}].
    context = JSONField()
    created_at = DoubleField(default=now)
    #: When the MCP client whose session this conversation is ended it (DELETE); null: not ended.
    ended_at = DoubleField(null=True)


class Turn(BaseModel):
    id = CharField(primary_key=True)
    conversation = ForeignKeyField(Conversation, backref="turns", on_delete="CASCADE")
    created_at = DoubleField(default=now)


class CallRecord(BaseModel):
    """One tool call as the organization may review it: never the body, never a token."""

    id = AutoField()
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    conversation_id = CharField()
    turn = CharField()
    tool = CharField()
    tool_version = IntegerField(null=True)  # null: the tool's draft, or no tool at all (unknown-tool)
    subject = CharField()
    anonymous = BooleanField()
    kind = CharField(null=True)  # null: success
    http_code = IntegerField(null=True)
    latency_ms = DoubleField()
    size_chars = IntegerField(null=True)  # null: over the cap, or nothing came back; shaped: what the model got
    raw_bytes = IntegerField(null=True)  # a shaped call's body as sent (decoded), beside its shaped size; else null
    jti = CharField(null=True)
    approval = CharField(null=True)  # the person's approval it was sent (or declined) on; null: none was needed
    session_start = BooleanField()
    created_at = DoubleField(default=now)

    class Meta:
        table_name = "call_record"


class Approval(BaseModel):
    """A call of a tool that requires approval, held unsent until the conversation's subject decides it.

    `definition` is the tool's definition as the conversation resolved it when the model made the call, and
    `arguments` the model's arguments, so an approval sends exactly the call the person saw. `status` is pending,
    approved or declined; a pending one past `expires_at` can no longer be decided. `result` is the step result the
    decision gave (the approved call's, or the declined failure), kept once the call has answered: what the model is
    handed when its paused turn goes on."""

    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    conversation = ForeignKeyField(Conversation, backref="approvals", on_delete="CASCADE")
    turn = CharField()
    call_id = TextField()
    tool = CharField()
    tool_version = IntegerField(null=True)  # null: the tool's draft, pinned by a project draft
    definition = JSONField()
    arguments = JSONField()
    subject = CharField()
    status = CharField()
    created_at = DoubleField(default=now)
    expires_at = DoubleField()
    decided_at = DoubleField(null=True)
    result = JSONField(null=True)


class Message(BaseModel):
    """One message of a conversation, in order, as the model saw it: the person's text, the model's text and
    tool calls, one step's results (the body as it came, or the small failure object), or the platform's note
    that it stopped a turn. Written as the turn goes, so a failure mid-turn keeps what was already said."""

    id = AutoField()
    conversation = ForeignKeyField(Conversation, backref="messages", on_delete="CASCADE")
    turn = CharField()
    role = CharField()  # user | assistant | tool | platform
    content = JSONField()
    created_at = DoubleField(default=now)


class TurnLock(BaseModel):
    """The turn a conversation is running now. Its primary key lets one turn in at a time, on every instance;
    `expires_at` frees a conversation whose turn died with its process."""

    conversation = ForeignKeyField(Conversation, primary_key=True, on_delete="CASCADE")
    holder = CharField()  # a random token of the request running the turn: only it releases the lock
    expires_at = DoubleField()
