"""A re-import (`update_existing`) never loosens a consequential tool silently: what the document does not say of the
person's approval, and cannot say of an entitlement, is kept from the tool's latest version, and the answer lists
each field kept."""
import pytest

from service.catalogue import RULES
from tests.importing.conftest import rules

SHOP = """
openapi: 3.0.3
info: {title: Shop, version: "1"}
servers: [{url: "https://api.shop.example.com"}]
paths:
  /orders:
    post: {operationId: placeOrder, summary: Place an order,MARK responses: {"200": {description: ok}}}
"""
KEPT_APPROVAL = {"field": "requires_approval", "rule": "approval-kept", "message": RULES["approval-kept"]}
KEPT_ENTITLEMENT = {"field": "required_entitlement", "rule": "entitlement-kept", "message": RULES["entitlement-kept"]}


def shop(mark: str = "") -> str:
    """The shop's document, its one operation marked `x-openai-isConsequential: <mark>` (or not marked)."""
    return SHOP.replace("MARK", f" x-openai-isConsequential: {mark}," if mark else "")


def published(api, **fields) -> None:
    """placeOrder registered with `fields` and published: a tool a person set up."""
    definition = {"name": "placeOrder", "description": "Places an order.", "method": "POST",
                  "url": "https://api.shop.example.com/orders", **fields}
    assert api("POST", "/v1/tools", json=definition).status_code == 201
    assert api("POST", "/v1/tools/placeOrder/publish").status_code == 201


def draft(api) -> dict:
    return api("GET", "/v1/tools/placeOrder").get_json()["draft"]["definition"]


KEPT_APPROVAL_OFF = {"field": "requires_approval", "rule": "approval-off-kept", "message": RULES["approval-off-kept"]}


@pytest.mark.parametrize("mark, chosen, kept", [("", False, KEPT_APPROVAL_OFF), ("true", False, KEPT_APPROVAL_OFF),
                                                ("false", True, KEPT_APPROVAL)])
def test_the_persons_approval_choice_is_kept_with_the_entitlement_and_the_preview_says_so(importer, api, mark, chosen,
                                                                                         kept):
    # The latest version differs from what the import sets (a POST waits for approval unless marked false): a
    # person chose it, and a re-import keeps it.
    published(api, requires_approval=chosen, required_entitlement="orders:write")

    preview = importer.preview(shop(mark), update_existing=True)["POST /orders"]

    assert (preview["status"], preview["action"]) == ("ready", "new-draft")
    assert preview["kept"] == [kept, KEPT_ENTITLEMENT]
    assert preview["approval"] == {"required": chosen, "rule": kept["rule"], "why": kept["message"]}
    assert (preview["definition"]["requires_approval"], preview["definition"]["required_entitlement"]) == (
        chosen, "orders:write")
    assert api("GET", "/v1/tools/placeOrder").get_json()["draft"] is None  # a preview writes nothing

    applied = importer.apply(shop(mark), update_existing=True)["POST /orders"]

    assert (applied["status"], applied["kept"]) == ("created", [kept, KEPT_ENTITLEMENT])
    written = draft(api)
    assert (written["requires_approval"], written["required_entitlement"]) == (chosen, "orders:write")
    assert written["description"] == "Place an order"  # the rest is the document's


@pytest.mark.parametrize("mark, approval", [("", True), ("false", False), ("true", True)])
def test_an_approval_as_the_import_sets_it_is_not_a_choice_to_keep(importer, api, mark, approval):
    published(api, requires_approval=approval, required_entitlement="orders:write")

    applied = importer.apply(shop(mark), update_existing=True)["POST /orders"]

    assert (applied["status"], applied["kept"]) == ("created", [KEPT_ENTITLEMENT])
    assert applied["definition"].get("requires_approval", False) is approval
    written = draft(api)
    assert (written["requires_approval"], written["required_entitlement"]) == (approval, "orders:write")


def test_a_choice_made_in_the_import_itself_replaces_the_kept_one(importer, api):
    published(api, requires_approval=False)

    applied = importer.apply(shop(), update_existing=True, requires_approval={"placeOrder": True})["POST /orders"]

    assert (applied["status"], applied["kept"]) == ("created", [])
    assert applied["approval"] == {"required": True, "rule": "approval-chosen", "why": RULES["approval-chosen"]}
    assert draft(api)["requires_approval"] is True


def test_nothing_is_kept_from_a_tool_as_the_import_makes_it_nor_for_a_new_one(importer, api):
    fresh = importer.preview(shop())["POST /orders"]
    assert (fresh["action"], fresh["kept"]) == ("register", [])
    published(api, requires_approval=True)

    applied = importer.apply(shop(), update_existing=True)["POST /orders"]

    assert (applied["status"], applied["kept"], rules(applied)) == ("created", [], [])
    written = draft(api)
    assert (written["requires_approval"], written["required_entitlement"]) == (True, None)


def test_a_refused_re_import_keeps_nothing_and_writes_nothing(importer, api):
    published(api, requires_approval=True)
    assert api("POST", "/v1/tools/placeOrder/draft").status_code == 201  # work in progress

    refused = importer.apply(shop(), update_existing=True)["POST /orders"]

    assert (refused["status"], rules(refused), refused["kept"]) == ("refused", [("name", "draft-exists")], [])


def test_what_the_model_sees_is_kept_from_the_latest_version_and_an_import_sets_none(importer, api):
    shaping = {"response_shape": "order.{id: id}", "error_fields": ["code"],
               "outcome_messages": {"refused:409": "That order was already placed."}}
    published(api, requires_approval=True, **shaping)

    applied = importer.apply(shop(), update_existing=True)["POST /orders"]

    kept = {"rule": "shaping-kept", "message": RULES["shaping-kept"]}
    assert (applied["status"], applied["kept"]) == ("created", [{"field": name, **kept} for name in shaping])
    written = draft(api)
    assert {name: written[name] for name in shaping} == shaping


def test_a_first_import_sets_nothing_of_what_the_model_sees(importer, api):
    applied = importer.apply(shop())["POST /orders"]
    assert applied["status"] == "created"
    assert not {"response_shape", "error_fields", "outcome_messages"} & set(draft(api))
