"""The Tools screen's lines: every tool in three queries, each with the definition being worked on, on both engines."""
from service import registry
from service.database import db
from tests.registry.test_tools_api import ORDERS


def test_each_line_has_the_drafts_settings_or_else_the_latest_versions(app):
    with db.connection_context():
        acme = registry.create_organization("lines")
        registry.create_project(acme, "shop", "test")
        registry.register_tool(acme, {**ORDERS, "name": "a_draft_only", "project": "shop"}, "test")
        registry.register_tool(acme, {**ORDERS, "name": "b_published"}, "test")
        registry.publish_tool(acme, "b_published", "test")
        redrafted = {**ORDERS, "name": "c_redrafted"}
        registry.register_tool(acme, redrafted, "test")
        registry.publish_tool(acme, "c_redrafted", "test")
        registry.start_draft(acme, "c_redrafted", "test")
        registry.publish_tool(acme, "c_redrafted", "test")
        registry.start_draft(acme, "c_redrafted", "test")
        registry.save_draft(acme, "c_redrafted", {**redrafted, "description": "Being worked on."}, "test")
        lines = {line["name"]: line for line in registry.tool_lines(acme)}
    assert list(lines) == ["a_draft_only", "b_published", "c_redrafted"]
    assert [(line["project"], line["latest"], line["draft"], line["based_on"]) for line in lines.values()] == [
        ("shop", None, True, None), (None, 1, False, None), (None, 2, True, 2)]
    assert lines["b_published"]["definition"]["description"] == ORDERS["description"]
    assert lines["c_redrafted"]["definition"]["description"] == "Being worked on."
