"""A tool's name never shares a path with a screen or a route: the fixed words where a tool's name sits in the
service's own paths are reserved, refused at registration with their sentence (issue 36)."""
import pytest

from service.catalogue import RULES
from service.definition import RESERVED_TOOL_NAMES
from service.models import Tool, ToolDraft
from tests.registry.test_tools_api import ORDERS

#: The paths whose next segment is a tool's name.
TOOL_PATHS = ("/tools/", "/v1/tools/")


def test_every_fixed_word_where_a_tool_name_sits_is_reserved(app):
    fixed = set()
    for rule in app.url_map.iter_rules():
        for prefix in TOOL_PATHS:
            if rule.rule.startswith(prefix):
                segment = rule.rule[len(prefix):].split("/")[0]
                if segment and not segment.startswith("<"):
                    fixed.add(segment)
    assert fixed == set(RESERVED_TOOL_NAMES)


@pytest.mark.parametrize("word", RESERVED_TOOL_NAMES)
def test_a_reserved_name_is_refused_at_registration_and_nothing_is_stored(api, word):
    response = api("POST", "/v1/tools", {**ORDERS, "name": word})
    assert response.status_code == 422
    assert response.json["errors"] == [{"field": "name", "rule": "name-reserved", "message": RULES["name-reserved"]}]
    assert api("GET", "/v1/tools").json["tools"] == []


def test_the_sentence_names_every_reserved_word():
    assert all(word in RULES["name-reserved"] for word in RESERVED_TOOL_NAMES)


def test_a_name_only_containing_a_reserved_word_is_a_name_like_any_other(api):
    assert api("POST", "/v1/tools", {**ORDERS, "name": "import_orders"}).status_code == 201
    assert api("POST", "/v1/tools", {**ORDERS, "name": "New"}).status_code == 201  # paths are case-sensitive


def test_a_tool_named_so_before_the_words_were_reserved_can_still_be_edited_and_published(api):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    # What an older registry let through, renamed in the database as it would have been stored.
    tool = Tool.get(Tool.name == "get_orders")
    Tool.update(name="new").where(Tool.id == tool.id).execute()
    draft = ToolDraft.get(ToolDraft.tool == tool.id)
    ToolDraft.update(definition={**draft.definition, "name": "new"}).where(ToolDraft.id == draft.id).execute()
    saved = api("PUT", "/v1/tools/new/draft", {**ORDERS, "name": "new", "description": "Edited."})
    assert saved.status_code == 200, saved.json
    assert api("POST", "/v1/tools/new/publish").status_code == 201
