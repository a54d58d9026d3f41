"""The dashboard's forms as plain data: submitted fields in, registry data out, and violations back to fields.

No Flask here. A form's input names are the registry's own field paths (`url`, `parameters[1].location`), so a
violation the registry reports lands next to the input it names without any mapping table.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from service.catalogue import Violation, violation
from service.dashboard.shaping import SHAPING_INPUTS, shaping_from_form
from service.definition import SUBJECT
from service.limits import MAX_STORED_INTEGER
from service.registry.rules import NAME_PATTERN, placeholders
from service.text import UNPAIRED_SURROGATE, is_blank, json_text_problems, whole_number

PARAMETERS = "parameters"
CALLS = "calls"
#: A parameter row's fields in the order the editor's table shows them, left to right.
PARAMETER_FIELDS = ("name", "type", "element_type", "location", "required", "description")
CALL_FIELDS = ("name", "arguments")
# A row index is a few ASCII digits: thousands of them (a 500 when read as a number) name no row, so match nothing.
_ROW_KEY = re.compile(r"^(\w+)\[([0-9]{1,6})\]\.(\w+)$")
_ROW_OP = re.compile(r"^(remove|up|down)-([0-9]{1,6})$")
PIN_PREFIX = "pin-"


def field_id(field: str) -> str:
    """The HTML id of the input for a field path: `parameters[1].location` → `f-parameters-1-location`."""
    return "f-" + (re.sub(r"[^A-Za-z0-9_]+", "-", field).strip("-") or "form")


_LABELS = {"url": "URL", "required_entitlement": "Required entitlement", "display_name": "Display name",
           "runs_at_session_start": "Runs at session start",
           "requires_approval": "Requires approval", "element_type": "element type", "api_key": "API key",
           "parameters": "Parameters", "calls": "Calls", "response_shape": "Response shape",
           "error_fields": "Error fields", "outcome_messages": "Outcome messages", "q": "Search"}
_ROWS = {"parameters": "Parameter", "calls": "Call"}


def field_label(field: str, labels: Mapping[str, str] | None = None) -> str:
    """A field path as a person reads it: `parameters[1].element_type` → `Parameter 2, element type`. A page
    whose inputs carry labels of their own (`labels`) names its fields as they do."""
    if labels and field in labels:
        return labels[field]
    match = _ROW_KEY.match(field) or re.match(r"^(\w+)\[(\d+)\]$", field)
    if match and match[1] in _ROWS:
        row = f"{_ROWS[match[1]]} {int(match[2]) + 1}"
        inner = match[3] if match.re is _ROW_KEY else ""
        return f"{row}, {_LABELS.get(inner, inner.replace('_', ' '))}" if inner else row
    if field.startswith(PIN_PREFIX):
        return f"Pin of {field[len(PIN_PREFIX):]}"
    return _LABELS.get(field, field.replace("_", " ").capitalize())


def _text(form: Mapping[str, str], key: str, *, strip: bool = True) -> str | None:
    """A text input's value, or None when blank (`is_blank`): the registry then reports the field as missing."""
    value = form.get(key, "")
    if is_blank(value):
        return None
    return (value.strip() or None) if strip else value


def rows(form: Mapping[str, str], prefix: str, fields: Iterable[str]) -> list[dict[str, str]]:
    """The repeated rows `prefix[i].field` of a form, in index order (the page renumbers them after a reorder)."""
    wanted = set(fields)
    found: dict[int, dict[str, str]] = {}
    for key in form:
        match = _ROW_KEY.match(key)
        if match and match[1] == prefix and match[3] in wanted:
            found.setdefault(int(match[2]), {})[match[3]] = form[key]
    return [found[i] for i in sorted(found)]


def parameter_from_row(row: Mapping[str, str]) -> dict[str, Any]:
    """One parameter row. A control the editor locked is disabled and so not sent; the registry's defaults
    (a subject is a string, an array or object rides in the body) then apply, exactly as the editor showed."""
    parameter: dict[str, Any] = {
        "name": _text(row, "name"),
        "required": row.get("required") == "on",
        "description": row.get("description", "").strip(),
    }
    for key in ("type", "location", "element_type"):
        value = _text(row, key)
        if value is not None:
            parameter[key] = value
    return parameter


def definition_from_form(form: Mapping[str, str], tool_name: str) -> dict[str, Any]:
    """What a submitted editor form asks the draft to become, in the registry's terms (the name is the tool's).

    A blank display name is sent as the tool name, since the spec says a blank label defaults to it.
    """
    return {
        "display_name": _text(form, "display_name") or tool_name,
        "description": _text(form, "description", strip=False),
        "method": _text(form, "method"),
        "url": _text(form, "url"),
        "scope": _text(form, "scope"),
        "runs_at_session_start": form.get("runs_at_session_start") == "on",
        "requires_approval": form.get("requires_approval") == "on",
        "required_entitlement": _text(form, "required_entitlement"),
        PARAMETERS: [parameter_from_row(r) for r in rows(form, PARAMETERS, PARAMETER_FIELDS)],
        **shaping_from_form(form),
    }


def editor_state(definition: Mapping[str, Any], display_name: str) -> dict[str, Any]:
    """What the editor shows for a stored definition: the same shape `definition_from_form` produces."""
    return {**definition, "display_name": display_name,
            PARAMETERS: [dict(p) for p in definition.get(PARAMETERS, [])]}


def registration_from_form(form: Mapping[str, str]) -> dict[str, Any]:
    """A registration: the few fields a valid first draft needs, and any parameters its URL's placeholders need
    already; the editor does the rest."""
    return {
        "name": _text(form, "name"),
        "display_name": _text(form, "display_name"),
        "project": _text(form, "project"),
        "description": _text(form, "description", strip=False),
        "method": _text(form, "method"),
        "url": _text(form, "url"),
        "scope": _text(form, "scope") or "shared",
        PARAMETERS: [parameter_from_row(r) for r in rows(form, PARAMETERS, PARAMETER_FIELDS)],
    }


def with_placeholder_parameters(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A refused registration with a path parameter added for each `{placeholder}` of its URL that has none (a
    string, required, as a path value must be), and per-user when one of them is the subject; and the names added.
    The form shows them for the person to check and send again: a first URL with a placeholder then ends in a
    draft, not in a refusal with no way on."""
    have = {p.get("name") for p in data[PARAMETERS] if p.get("location") == "path"}
    added = [name for name in dict.fromkeys(placeholders(data.get("url") or ""))
             if name not in have and NAME_PATTERN.fullmatch(name)]
    if not added:
        return data, []
    rows_added = [{**BLANK_PARAMETER, "name": name, "location": "path"} for name in added]
    scope = "per_user" if SUBJECT in added else data.get("scope")
    return {**data, "scope": scope, PARAMETERS: [*data[PARAMETERS], *rows_added]}, added


def apply_row_op(items: list[dict[str, Any]], op: str, blank: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Add, remove or move a row: what the page's script does in place, done on the server when it cannot run."""
    items = list(items)
    if op == "add":
        return items + [dict(blank)]
    match = _ROW_OP.match(op or "")
    if not match or int(match[2]) >= len(items):
        return items
    action, i = match[1], int(match[2])
    if action == "remove":
        del items[i]
    elif action == "up" and i > 0:
        items[i - 1], items[i] = items[i], items[i - 1]
    elif action == "down" and i < len(items) - 1:
        items[i + 1], items[i] = items[i], items[i + 1]
    return items


BLANK_PARAMETER = {"name": None, "type": "string", "location": "query", "required": True, "description": ""}
BLANK_CALL = {"name": "", "arguments": "{}"}


#: The order of the fields on the pages that show a definition (the register form, the editor): the summary of a
#: refused save lists its violations in this order, so it reads as the page does. A violation of no field (`""`) is
#: about the whole definition and comes first; rows follow their field, each in `PARAMETER_FIELDS` order.
FIELD_ORDER = ("", "name", "display_name", "project", "description", "method", "url", "scope", "required_entitlement",
               "runs_at_session_start", "requires_approval", *SHAPING_INPUTS, PARAMETERS)
_COLUMNS = {PARAMETERS: PARAMETER_FIELDS, CALLS: CALL_FIELDS}
_ROW = re.compile(r"^(\w+)\[([0-9]{1,6})\](?:\.(\w+))?$")


def in_field_order(violations: Iterable[Violation]) -> list[Violation]:
    """Violations in the order their fields stand on the page; fields a page does not order keep theirs, after. A
    violation reported twice (a URL with two placeholders lacking parameters) is shown once."""
    def place(v: Violation) -> tuple[int, int, int]:
        match = _ROW.match(v.field)
        top = match[1] if match else v.field
        rank = FIELD_ORDER.index(top) if top in FIELD_ORDER else len(FIELD_ORDER)
        if not match:
            return rank, -1, -1
        columns = _COLUMNS.get(top, ())
        column = columns.index(match[3]) if match[3] in columns else (-1 if match[3] is None else len(columns))
        return rank, int(match[2]), column

    return sorted(dict.fromkeys(violations), key=place)


#: What the register form says of a field left blank, in the spec's voice (the registry's own rule for a missing
#: field, `field-required`, is the same sentence for every field of every request).
MISSING = {"name": "tool-name-required", "method": "method-required", "url": "url-required"}


def in_spec_voice(violations: Iterable[Violation]) -> list[Violation]:
    """A definition's violations with each blank field the register form asks for named in the spec's voice."""
    return [violation(v.field, MISSING[v.field]) if v.rule == "field-required" and v.field in MISSING else v
            for v in violations]


def errors_by_field(violations: Iterable[Violation]) -> dict[str, list[str]]:
    """Each field's messages, in the order the registry reported them."""
    found: dict[str, list[str]] = {}
    for v in violations:
        found.setdefault(v.field, []).append(v.message)
    return found


def pins_from_form(form: Mapping[str, str]) -> list[dict[str, Any]]:
    """The project draft's pins, in the page's order: `pin-<tool>` is blank (not pinned), `draft` or a number."""
    pins = []
    for key in form:
        if not key.startswith(PIN_PREFIX):
            continue
        value = form[key].strip()
        if not value:
            continue
        pins.append({"tool": key[len(PIN_PREFIX):], "version": whole_number(value, MAX_STORED_INTEGER) or value})
    return pins


def pin_violations(pins: list[dict[str, Any]], violations: Iterable[Violation]) -> list[Violation]:
    """Move `pins[i]…` violations onto the `pin-<tool>` select of the tool that pin names."""
    moved = []
    for v in violations:
        match = re.match(r"^pins\[(\d+)\]", v.field)
        if match and int(match[1]) < len(pins):
            v = Violation(PIN_PREFIX + str(pins[int(match[1])]["tool"]), v.rule, v.message)
        moved.append(v)
    return moved


def entitlements_from_text(text: str) -> list[str]:
    """Entitlements typed as a list separated by commas or spaces, without repeats."""
    return list(dict.fromkeys(e for e in re.split(r"[\s,]+", text or "") if e))


def calls_from_form(form: Mapping[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, str]], list[Violation]]:
    """A playground step: the calls to run (`{id, name, arguments}`), the rows as typed, and every problem."""
    typed = [{"name": r.get("name", "").strip(), "arguments": r.get("arguments", "")}
             for r in rows(form, CALLS, CALL_FIELDS)]
    calls, problems = [], []
    for i, row in enumerate(typed):
        if not row["name"]:
            problems.append(violation(f"{CALLS}[{i}].name", "field-required"))
        try:
            arguments = json.loads(row["arguments"]) if row["arguments"].strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            problems.append(violation(f"{CALLS}[{i}].arguments", "arguments-format"))
        elif json_text_problems(arguments, ""):  # JSON's "\ud800" is no text: refused as a step refuses it, on the box
            problems.append(violation(f"{CALLS}[{i}].arguments", UNPAIRED_SURROGATE))
        calls.append({"id": f"call_{i + 1}", "name": row["name"], "arguments": arguments})
    if not typed:
        problems.append(violation(CALLS, "calls-format"))
    return calls, typed, problems
