"""The editor's form as plain data: field paths in, registry data out, violations back to their inputs."""
from werkzeug.datastructures import MultiDict

from service.catalogue import RULES, Violation
from service.dashboard.forms import (
    BLANK_PARAMETER,
    apply_row_op,
    calls_from_form,
    definition_from_form,
    entitlements_from_text,
    errors_by_field,
    field_id,
    field_label,
    in_field_order,
    in_spec_voice,
    pin_violations,
    pins_from_form,
    registration_from_form,
    with_placeholder_parameters,
)


def test_a_field_path_becomes_an_html_id():
    assert field_id("parameters[10].element_type") == "f-parameters-10-element_type"
    assert field_id("url") == "f-url"
    assert field_id("") == "f-form"


def test_a_field_path_reads_as_words():
    assert field_label("parameters[1].element_type") == "Parameter 2, element type"
    assert field_label("parameters") == "Parameters"
    assert field_label("calls[0].arguments") == "Call 1, arguments"
    assert field_label("pin-get_orders") == "Pin of get_orders"
    assert field_label("url") == "URL"


def test_rows_are_read_in_index_order_whatever_the_form_order():
    form = MultiDict([("parameters[1].name", "second"), ("parameters[1].type", "number"),
                      ("parameters[0].name", "first"), ("parameters[0].type", "string"),
                      ("parameters[0].required", "on"), ("parameters[0].bogus", "ignored")])
    parameters = definition_from_form(form, "t")["parameters"]
    assert [p["name"] for p in parameters] == ["first", "second"]
    assert [p["required"] for p in parameters] == [True, False]  # an unchecked box is not sent
    assert "bogus" not in parameters[0]


def test_blank_text_is_missing_so_the_registry_reports_it_as_such():
    data = definition_from_form(MultiDict({"description": "  ", "url": "", "required_entitlement": " ",
                                           "parameters[0].name": "", "parameters[0].type": "string"}), "t")
    assert data["description"] is None and data["url"] is None and data["required_entitlement"] is None
    assert data["parameters"][0]["name"] is None


def test_locked_controls_are_absent_so_the_registry_defaults_apply():
    # The page disables the subject's type and an array's location: neither is sent.
    data = definition_from_form(MultiDict({"parameters[0].name": "subject", "parameters[0].location": "path",
                                           "parameters[1].name": "ids", "parameters[1].type": "array",
                                           "parameters[1].element_type": "string"}), "t")
    assert "type" not in data["parameters"][0]
    assert "location" not in data["parameters"][1]


def test_a_blank_display_name_is_the_tool_name():
    assert definition_from_form(MultiDict({"display_name": " "}), "get_orders")["display_name"] == "get_orders"
    assert definition_from_form(MultiDict({"display_name": "Orders"}), "get_orders")["display_name"] == "Orders"


def test_the_session_start_box_is_a_boolean():
    assert definition_from_form(MultiDict({"runs_at_session_start": "on"}), "t")["runs_at_session_start"] is True
    assert definition_from_form(MultiDict(), "t")["runs_at_session_start"] is False


def test_registration_is_a_shared_tool_with_no_parameters():
    data = registration_from_form(MultiDict({"name": " get_orders ", "project": "", "method": "GET"}))
    assert data["name"] == "get_orders" and data["project"] is None
    assert data["scope"] == "shared" and data["parameters"] == []


def test_row_ops_add_remove_and_move():
    rows = [{"name": "a"}, {"name": "b"}, {"name": "c"}]
    names = lambda items: [r["name"] for r in items]  # noqa: E731
    assert names(apply_row_op(rows, "up-1", BLANK_PARAMETER)) == ["b", "a", "c"]
    assert names(apply_row_op(rows, "down-1", BLANK_PARAMETER)) == ["a", "c", "b"]
    assert names(apply_row_op(rows, "remove-0", BLANK_PARAMETER)) == ["b", "c"]
    assert names(apply_row_op(rows, "add", BLANK_PARAMETER)) == ["a", "b", "c", None]
    # Edges and nonsense leave the rows as they were.
    for op in ("up-0", "down-2", "remove-9", "explode", ""):
        assert names(apply_row_op(rows, op, BLANK_PARAMETER)) == ["a", "b", "c"]
    assert names(rows) == ["a", "b", "c"]  # never changed in place


def test_errors_are_grouped_by_field_in_order():
    found = errors_by_field([Violation("url", "a", "one"), Violation("name", "b", "two"),
                             Violation("url", "c", "three")])
    assert found == {"url": ["one", "three"], "name": ["two"]}


def test_the_summary_follows_the_page_top_to_bottom_and_says_a_repeated_problem_once():
    """The registry reports rules as it checks them (the rows', then those that tie fields together); the summary
    lists them as the page shows the fields: the definition's, the parameters' own, then row by row, column by
    column (the issue's editor had the tool-level problem 8th of 13)."""
    reported = [Violation("parameters[1].element_type", "array-needs-element-type", "e"),
                Violation("parameters[0].location", "body-needs-body-method", "b"),
                Violation("parameters[1].name", "duplicate-parameter", "d"),
                Violation("parameters[10].type", "type-unsupported", "t"),
                Violation("url", "placeholder-needs-parameter", "u"),
                Violation("url", "placeholder-needs-parameter", "u"),
                Violation("parameters", "per-user-needs-subject", "p"),
                Violation("description", "description-required", "r"),
                Violation("", "unbuildable", "x"),
                Violation("pin-a", "pin-no-draft", "q")]
    assert [v.field for v in in_field_order(reported)] == [
        "", "description", "url", "parameters", "parameters[0].location", "parameters[1].name",
        "parameters[1].element_type", "parameters[10].type", "pin-a"]


def test_a_register_form_names_its_blank_fields_in_the_specs_voice():
    found = in_spec_voice([Violation("name", "field-required", RULES["field-required"]),
                           Violation("url", "field-required", RULES["field-required"]),
                           Violation("project", "field-required", RULES["field-required"])])
    assert [(v.field, v.rule, v.message) for v in found] == [
        ("name", "tool-name-required", "A tool needs a tool name: the function name the model calls."),
        ("url", "url-required", "A tool needs a URL: the address the platform calls."),
        ("project", "field-required", "This field is required.")]


def test_a_placeholder_without_its_path_parameter_gets_one_and_the_subject_makes_the_tool_per_user():
    data = registration_from_form(MultiDict({"url": "https://x.example/users/{subject}/orders/{id}/{id}",
                                             "parameters[0].name": "id", "parameters[0].location": "query"}))
    added, names = with_placeholder_parameters(data)
    assert names == ["subject", "id"]  # a query parameter of the same name does not fill a path placeholder
    assert added["scope"] == "per_user"
    assert [(p["name"], p["location"], p["type"], p["required"]) for p in added["parameters"][1:]] == [
        ("subject", "path", "string", True), ("id", "path", "string", True)]
    unchanged = registration_from_form(MultiDict({"url": "https://x.example/{bad name}"}))
    assert with_placeholder_parameters(unchanged) == (unchanged, [])  # not a name a parameter can have


def test_pins_keep_the_page_order_and_skip_unpinned_tools():
    form = MultiDict([("pin-b", "draft"), ("pin-a", ""), ("pin-c", "3"), ("pin-d", "v2"), ("other", "x")])
    assert pins_from_form(form) == [{"tool": "b", "version": "draft"}, {"tool": "c", "version": 3},
                                    {"tool": "d", "version": "v2"}]


def test_pin_violations_land_on_the_select_of_the_tool_they_name():
    pins = [{"tool": "b", "version": "draft"}, {"tool": "c", "version": 3}]
    moved = pin_violations(pins, [Violation("pins[1].version", "pin-unknown-version", "m"),
                                  Violation("pins", "field-type", "n")])
    assert [v.field for v in moved] == ["pin-c", "pins"]


def test_entitlements_split_on_commas_and_spaces_once_each():
    assert entitlements_from_text("orders:read, products:write orders:read\n") == ["orders:read", "products:write"]
    assert entitlements_from_text("") == []


def test_calls_parse_their_arguments_and_report_each_problem():
    form = MultiDict({"calls[0].name": "a", "calls[0].arguments": '{"q": 1}', "calls[1].name": "",
                      "calls[1].arguments": "[1]", "calls[2].name": "c", "calls[2].arguments": ""})
    calls, typed, problems = calls_from_form(form)
    assert calls[0] == {"id": "call_1", "name": "a", "arguments": {"q": 1}}
    assert calls[2]["arguments"] == {}
    assert typed[1] == {"name": "", "arguments": "[1]"}
    assert [(p.field, p.message) for p in problems] == [
        ("calls[1].name", "This field is required."), ("calls[1].arguments", RULES["arguments-format"])]
    # No call at all: the API's rule for a step, with its one sentence.
    assert [(p.field, p.rule, p.message) for p in calls_from_form(MultiDict())[2]] == [
        ("calls", "calls-format", "A step carries from 1 to 500 calls.")]


def test_the_approval_checkbox_is_read_like_the_session_start_one():
    assert definition_from_form(MultiDict({"requires_approval": "on"}), "t")["requires_approval"] is True
    assert definition_from_form(MultiDict({}), "t")["requires_approval"] is False
