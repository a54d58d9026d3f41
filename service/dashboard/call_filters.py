"""The call log's filter form as plain data: the query string in, a `CallQuery` and the values to show again out.

No Flask here. Times are typed in a `datetime-local` input and read as UTC, the zone every dashboard page shows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Mapping

from service.catalogue import Violation, violation
from service.limits import MAX_ROW_ID
from service.records.calls import KINDS, CallQuery
from service.text import text_problem, whole_number

#: The form's inputs, in the order the page shows them; `from` and `to` bound the time of the call.
TEXT_FILTERS = ("conversation", "turn", "tool", "subject")
FILTERS = (*TEXT_FILTERS, "kind", "from", "to")
#: Paging: the id of the oldest call already shown (the API's `before`).
BEFORE = "before"

@dataclass(frozen=True)
class CallFilters:
    """What the form asked for: the values as typed (to fill the form again), the query, and every problem."""

    values: dict[str, str]
    query: CallQuery
    violations: list[Violation] = field(default_factory=list)

    def active(self) -> dict[str, str]:
        """The filters that are set, for links that keep them (the next page, a narrower filter)."""
        return {k: v for k, v in self.values.items() if v}


def parse_time(text: str) -> float:
    """A `datetime-local` value ("2026-01-02T10:30", seconds optional) read as UTC, in Unix seconds."""
    moment = datetime.fromisoformat(text.strip().replace(" ", "T"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def call_filters(args: Mapping[str, str], limit: int) -> CallFilters:
    """Read the filter form. Blank inputs filter nothing; `limit` is how many calls one page asks for."""
    values = {name: (args.get(name) or "").strip() for name in FILTERS}
    problems: list[Violation] = []
    times: dict[str, float | None] = {"from": None, "to": None}
    for name in times:
        if values[name]:
            try:
                times[name] = parse_time(values[name])
            except ValueError:
                problems.append(violation(name, "time-format"))
    if times["from"] is not None and times["to"] is not None and times["to"] <= times["from"]:
        problems.append(violation("to", "time-order"))
    if values["kind"] and values["kind"] not in KINDS:
        problems.append(violation("kind", "kind-unknown"))
    problems += [violation(name, problem) for name in TEXT_FILTERS if (problem := text_problem(values[name]))]
    query = CallQuery(**{name: values[name] or None for name in TEXT_FILTERS},
                      kind=values["kind"] or None, since=times["from"], until=times["to"],
                      before_id=whole_number((args.get(BEFORE) or "").strip(), MAX_ROW_ID), limit=limit)
    return CallFilters(values, query, problems)
