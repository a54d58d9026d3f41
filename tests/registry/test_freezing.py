"""Publishing a tool freezes it for every project that pins it: project drafts pinning its draft move to the version.

Spec: "publishing it, whether on its own or as part of publishing a project version, freezes it for every project
that pins it". Before, publishing project A consumed tool T's draft while project B's draft still pinned T's
`draft`: B's test conversations silently lost T, and B could not publish until someone pinned again by hand.
"""
import gevent
import pytest

from service import registry
from service.database import db
from service.errors import ServiceError
from service.records import audit
from tests.conftest import ENGINES
from tests.registry.test_projects import SEARCH
from tests.registry.test_tools_api import ORDERS

DRAFT_PIN = {"tool": "search_products", "version": "draft"}


def projects_pinning_the_search_draft(api, *names):
    assert api("POST", "/v1/tools", SEARCH).status_code == 201
    for name in names:
        assert api("POST", "/v1/projects", {"name": name}).status_code == 201
        assert api("PUT", f"/v1/projects/{name}/draft", {"pins": [DRAFT_PIN]}).status_code == 200


def offered_on_draft(api, keys, project):
    """The tools a conversation on the project's draft offers the model."""
    minted = api("POST", "/v1/session-tokens", {"subject": "alice"}, key=keys["backend"])
    assert minted.status_code == 201, minted.json
    opened = api("POST", "/v1/conversations", {"project": project, "version": "draft"}, key=minted.json["token"])
    assert opened.status_code == 201, opened.json
    return [tool["name"] for tool in opened.json["tools"]]


def test_publishing_project_a_moves_project_b_to_the_version_its_pinned_draft_became(api, keys):
    projects_pinning_the_search_draft(api, "shop", "kiosk")
    assert offered_on_draft(api, keys, "kiosk") == ["search_products"]
    revision = api("GET", "/v1/projects/kiosk").json["draft"]["revision"]

    published = api("POST", "/v1/projects/shop/publish")

    assert published.status_code == 201
    assert published.json == {"version": 1, "published": [{"tool": "search_products", "version": 1}],
                              "repinned": [{"project": "kiosk", "tool": "search_products", "version": 1}]}
    kiosk = api("GET", "/v1/projects/kiosk").json
    assert kiosk["draft"]["pins"] == [{"tool": "search_products", "version": 1}]
    assert kiosk["draft"]["revision"] == revision + 1
    assert offered_on_draft(api, keys, "kiosk") == ["search_products"]  # the test conversation keeps the tool
    assert api("POST", "/v1/projects/kiosk/publish").json == {"version": 1, "published": [], "repinned": []}
    assert api("GET", "/v1/projects/kiosk").json["versions"][0]["pins"] == [{"tool": "search_products",
                                                                            "version": 1}]


def test_publishing_a_tool_on_its_own_moves_every_draft_that_pinned_it_and_nothing_else(api):
    projects_pinning_the_search_draft(api, "shop", "kiosk")
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    both = [{"tool": "get_orders", "version": "draft"}, DRAFT_PIN]
    assert api("PUT", "/v1/projects/kiosk/draft", {"pins": both}).status_code == 200
    assert api("POST", "/v1/projects", {"name": "frozen"}).status_code == 201

    published = api("POST", "/v1/tools/search_products/publish")

    assert published.status_code == 201
    assert published.json == {"version": 1, "repinned": [
        {"project": "kiosk", "tool": "search_products", "version": 1},
        {"project": "shop", "tool": "search_products", "version": 1}]}
    # Only the published tool's pin moves; the other pin and its place stay as they were.
    assert api("GET", "/v1/projects/kiosk").json["draft"]["pins"] == [{"tool": "get_orders", "version": "draft"},
                                                                     {"tool": "search_products", "version": 1}]
    assert api("GET", "/v1/projects/shop").json["draft"]["pins"] == [{"tool": "search_products", "version": 1}]
    assert api("GET", "/v1/projects/frozen").json["draft"]["pins"] == []
    # A pin by number is never moved, even by the next publish.
    assert api("POST", "/v1/tools/search_products/draft").status_code == 201
    assert api("POST", "/v1/tools/search_products/publish").json == {"version": 2, "repinned": []}
    assert api("GET", "/v1/projects/shop").json["draft"]["pins"] == [{"tool": "search_products", "version": 1}]


def test_each_moved_draft_is_in_the_audit_trail_as_the_publishers_change(api, app, keys):
    projects_pinning_the_search_draft(api, "shop", "kiosk")
    assert api("POST", "/v1/projects/shop/publish").status_code == 201

    records = api("GET", "/v1/audit").json["records"]
    actions = [(r["action"], r["object"]["name"]) for r in reversed(records)][-3:]
    assert actions == [("publish", "search_products"), ("project-repin", "kiosk"), ("project-publish", "shop")]
    repin = next(r for r in records if r["action"] == "project-repin")
    assert repin["actor"]["role"] == "admin"
    assert repin["object"] == {"type": "project", "name": "kiosk", "version": None}
    assert (repin["before_hash"], repin["after_hash"]) == (
        audit.state_hash([DRAFT_PIN]), audit.state_hash([{"tool": "search_products", "version": 1}]))
    with app.app_context(), db.connection_context():
        assert audit.verify().ok


def test_a_pin_saved_while_its_draft_is_published_is_moved_or_refused_never_left_dangling(api, app):
    """A save of pins racing a publish of the pinned draft: on PostgreSQL the save holds the draft it pins, so the
    publish either moves the saved pin or the save finds the draft gone. Never a pin to a draft that is no more."""
    with app.app_context(), db.connection_context():
        acme = registry.get_organization("acme")
        registry.create_project(acme, "shop", "test")
    outcomes, pins_before = [], []
    for round_ in range(6):
        name = f"racer_{round_}"
        with db.connection_context():
            registry.register_tool(acme, {**SEARCH, "name": name}, "test")

        def save(name=name):
            with db.connection_context():
                try:
                    registry.save_project_draft(acme, "shop", [{"tool": name, "version": "draft"}], "test")
                    return "saved"
                except ServiceError as error:
                    return error.violations[0].rule

        def publish(name=name):
            with db.connection_context():
                return registry.publish_tool(acme, name, "test").number

        racers = [gevent.spawn(save), gevent.spawn(publish)] if round_ % 2 else [gevent.spawn(publish),
                                                                                 gevent.spawn(save)]
        gevent.joinall(racers, raise_error=True)
        outcome = racers[0].value if round_ % 2 else racers[1].value
        outcomes.append(outcome)
        pins = api("GET", "/v1/projects/shop").json["draft"]["pins"]
        assert api("GET", f"/v1/tools/{name}").json["draft"] is None
        # A save that won pins the version the publish made; one refused leaves the pins as they were, however many
        # rounds ago they were last saved: never a pin to a draft that is no more.
        assert pins == ([{"tool": name, "version": 1}] if outcome == "saved" else pins_before), (outcome, pins)
        pins_before = pins
    assert set(outcomes) <= {"saved", "pin-no-draft"}


# PostgreSQL only: on SQLite a writer holds the whole database from its first statement, so no publish can run
# between another's reading its pins and its holding the drafts.
@pytest.mark.parametrize("database_url", [ENGINES[1]], indirect=True)
def test_a_project_publish_that_read_its_pins_before_another_froze_them_publishes_what_they_became(api, app, monkeypatch):
    """Two projects pin the same draft; the late one reads its pins, then waits while the other publishes (consuming
    the draft and moving the late one's pins). Read again once it holds the drafts, its pins name the version: it
    publishes it, never refused with `pin-no-draft` for a draft it could not have seen go."""
    from service.registry import projects

    with app.app_context(), db.connection_context():
        acme = registry.get_organization("acme")
        registry.register_tool(acme, {**SEARCH, "name": "shared_search"}, "test")
        for project in ("early", "late"):
            registry.create_project(acme, project, "test")
            registry.save_project_draft(acme, project, [{"tool": "shared_search", "version": "draft"}], "test")
    read = projects.project_draft
    waited = []

    def read_then_wait(project):
        draft = read(project)
        if project.name == "late" and not waited:
            waited.append(True)
            gevent.sleep(0.2)  # the early publish runs whole meanwhile
        return draft

    monkeypatch.setattr(projects, "project_draft", read_then_wait)

    def publish(project):
        with db.connection_context():
            return registry.publish_project(acme, project, "test").number

    late = gevent.spawn(publish, "late")
    gevent.sleep(0.05)
    early = gevent.spawn(publish, "early")
    gevent.joinall([late, early], raise_error=True)

    assert waited and (late.value, early.value) == (1, 1)
    with db.connection_context():
        for project in ("early", "late"):
            versions = registry.project_view(registry.get_project(acme, project))["versions"]
            assert [v["pins"] for v in versions] == [[{"tool": "shared_search", "version": 1}]], project
