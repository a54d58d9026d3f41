"""How the operations records read on a page: who did what to a tool, a diff line by line, version references.

No Flask here. The facts come from `service.ops` (audit records, changes, diffs); this only words them.
"""
from __future__ import annotations

from typing import Any, Mapping

from service.dispatch.failures import UNKNOWN_TOOL
from service.limits import MAX_STORED_INTEGER
from service.ops.changes import ENDPOINT, MODEL
from service.ops.impact import DRAFT
from service.records import audit
from service.text import whole_number

#: What each change to a tool reads as in its history; `{version}` is the record's version.
ACTIONS = {
    audit.REGISTER: "Registered the tool",
    audit.SAVE: "Saved the draft",
    audit.PUBLISH: "Published version {version}",
    audit.START_DRAFT: "Started a new draft from version {version}",
    audit.RELABEL: "Changed the display name",
}
_CLI = audit.Actor.parse(audit.CLI_ACTOR)
AGENT = "agent"

# The kinds of line in a unified diff.
HEADER, HUNK, ADDED, REMOVED, CONTEXT = "header", "hunk", "added", "removed", "context"

_BROKEN = {MODEL: "the model", ENDPOINT: "the endpoint"}


def history_entry(record: Mapping[str, Any]) -> dict[str, Any]:
    """One audit record (`audit.record_view`) as a line of a tool's history: when, who, and what they did."""
    actor = record["actor"]
    by_cli = (actor["kind"], actor["role"], actor["key_id"]) == (_CLI.kind, _CLI.role, _CLI.key_id)
    version = record["object"]["version"]
    return {
        "seq": record["seq"], "at": record["at"],
        "what": ACTIONS.get(record["action"], record["action"]).format(version=version),
        "agent": actor["kind"] == AGENT,
        "who": "Agent" if actor["kind"] == AGENT else "Person",
        "how": "the command line" if by_cli else f"{actor['role']} key {actor['key_id']}",
    }


def diff_lines(text: str) -> list[tuple[str, str]]:
    """Each line of a unified diff (`changes.text_diff`) with its kind: header, hunk, added, removed or context."""
    found = []
    for i, line in enumerate(text.splitlines()):
        if i < 2 and line.startswith(("--- ", "+++ ")):
            kind = HEADER  # only the first two lines name the files; a removed line can start with "--" too
        elif line.startswith("@@"):
            kind = HUNK
        elif line.startswith("+"):
            kind = ADDED
        elif line.startswith("-"):
            kind = REMOVED
        else:
            kind = CONTEXT
        found.append((kind, line))
    return found


def breaks(affects: list[str] | tuple[str, ...]) -> str:
    """Who a breaking change breaks, as a sentence: "Breaks the model and the endpoint."."""
    return "Breaks " + " and ".join(_BROKEN.get(a, a) for a in affects) + "."


def version_ref(text: str | None) -> int | str | None:
    """A version reference from a form: a published version number, or "draft"; None when it is neither."""
    text = (text or "").strip()
    if text == DRAFT:
        return DRAFT
    return whole_number(text, MAX_STORED_INTEGER)  # past it, no version: and never sent to the database


def ref_label(ref: int | str) -> str:
    return "the draft" if ref == DRAFT else f"version {ref}"


def compare_choices(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(value, label) for every version of a tool (`registry.tool_view`) one can compare: the draft, then the
    published versions, newest first."""
    choices = [(DRAFT, "Draft")] if tool["draft"] else []
    return choices + [(str(v["version"]), f"Version {v['version']}") for v in reversed(tool["versions"])]


def default_pair(tool: Mapping[str, Any]) -> tuple[int | str, int | str] | None:
    """What the compare form starts on: the latest version against the draft, or the two latest versions;
    None when the tool has fewer than two versions to compare."""
    numbers = [v["version"] for v in tool["versions"]]
    if tool["draft"] and numbers:
        return numbers[-1], DRAFT
    if len(numbers) >= 2:
        return numbers[-2], numbers[-1]
    return None


def version_called(call: Mapping[str, Any]) -> str:
    """The tool version a call-log row (`calls.call_view`) called: a number, "draft", or "none" (no such tool)."""
    if call["version"] is not None:
        return str(call["version"])
    return "none" if call["kind"] == UNKNOWN_TOOL else DRAFT


def names(items: list[str]) -> str:
    """Names as a sentence lists them: "a", "a and b", "a, b, and c"."""
    if len(items) <= 2:
        return " and ".join(items)
    return f"{', '.join(items[:-1])}, and {items[-1]}"


def repinned_sentence(repinned: list[Mapping[str, Any]]) -> str:
    """What a publish moved (`Repin.to_dict` items), one sentence per project: "The draft version of shop now pins
    get_orders version 2."; empty when it moved nothing."""
    by_project: dict[str, list[str]] = {}
    for repin in repinned:
        by_project.setdefault(repin["project"], []).append(f"{repin['tool']} version {repin['version']}")
    return " ".join(f"The draft version of {project} now pins {names(pins)}." for project, pins in by_project.items())
