"""`lifecycle/…` of a tool: registered as a draft, saved in place, published and frozen, drafted again.

Every case registers its own tools under the run's prefix and checks what the REST API shows
afterwards. Projects are in projects.py, agents in agent.py.
"""
from __future__ import annotations

from typing import Any

from conformance.case import Check, Verdict
from conformance.platform.client import PlatformTarget, expect_status, published_number, tool
from conformance.platform.suite import SUITE, contract, defining


def draft_definition(view: dict[str, Any]) -> dict[str, Any]:
    """The definition of a tool view's draft ({} when it has none)."""
    return (view.get("draft") or {}).get("definition") or {}


def versions(view: dict[str, Any]) -> list[Any]:
    """The numbers of a tool view's published versions."""
    return [v.get("version") for v in view.get("versions", [])]


@SUITE.case(
    "lifecycle/register-creates-draft",
    title="Registering creates a draft and no version",
    requirement="Registering a tool answers 201 and creates its one draft; nothing is published yet.",
    spec=defining("Registering creates a draft and opens the editor"),
)
def register_creates_draft(target: PlatformTarget) -> Verdict:
    name = target.name("lifecycle_register")
    definition = tool(name, target.mock(name, "echo"))
    reply = target.register(definition)
    check = Check()
    check.expect(reply.status == 201, "registering", "HTTP 201", reply.describe())
    view = target.read_tool(name)
    check.equal("the draft's URL", definition["url"], draft_definition(view).get("url"))
    check.equal("published versions", [], versions(view))
    return check.verdict()


@SUITE.case(
    "lifecycle/save-in-place",
    title="Saving edits the one draft in place",
    requirement="Each save replaces the tool's one draft: after two saves there is still one draft, holding "
                "the last save, and no version.",
    spec=defining("Saving edits that same draft in place, so there is one draft you keep refining rather "
                  "than a new copy each time you save."),
)
def save_in_place(target: PlatformTarget) -> Verdict:
    name = target.name("lifecycle_save")
    expect_status(target.register(tool(name, target.mock(name, "echo/first"))), 201, "registering")
    check = Check()
    for edit in ("second", "third"):
        reply = target.api("PUT", f"/v1/tools/{name}/draft", tool(name, target.mock(name, f"echo/{edit}")))
        check.expect(reply.status == 200, f"saving the {edit} edit", "HTTP 200", reply.describe())
    view = target.read_tool(name)
    check.equal("the draft's URL", target.mock(name, "echo/third"), draft_definition(view).get("url"))
    check.equal("published versions", [], versions(view))
    listed = target.listed_tools(name)
    check.equal("times the tool is listed", 1, sum(1 for t in listed if t.get("name") == name))
    return check.verdict()


@SUITE.case(
    "lifecycle/publish-freezes",
    title="Publishing freezes the draft into an immutable version",
    requirement="Publishing answers 201 with version 1, leaves no draft, and version 1 keeps the published "
                "definition after a new draft is saved.",
    spec=(defining("you publish the tool to freeze the draft into an immutable version that can never "
                   "change again"),
          contract("`POST /v1/tools/{name}/publish` | freezes the draft into the next version, 201 "
                   "`{\"version\": N}`")),
)
def publish_freezes(target: PlatformTarget) -> Verdict:
    name = target.name("lifecycle_publish")
    published_url = target.mock(name, "echo/published")
    expect_status(target.register(tool(name, published_url)), 201, "registering")
    check = Check()
    reply = target.api("POST", f"/v1/tools/{name}/publish")
    check.expect(reply.status == 201 and published_number(reply) == 1, "publishing",
                 'HTTP 201 {"version": 1}', reply.describe())
    check.equal("the draft after publishing", None, target.read_tool(name).get("draft"))
    expect_status(target.api("POST", f"/v1/tools/{name}/draft"), 201, "starting a new draft")
    expect_status(target.api("PUT", f"/v1/tools/{name}/draft", tool(name, target.mock(name, "echo/later"))),
                  200, "saving the new draft")
    version = target.api("GET", f"/v1/tools/{name}/versions/1")
    check.expect(version.status == 200, "reading version 1", "HTTP 200", version.describe())
    frozen = (version.body or {}).get("definition") or {}
    check.equal("version 1's URL after the new draft was saved", published_url, frozen.get("url"))
    return check.verdict()


@SUITE.case(
    "lifecycle/published-read-only",
    title="A published version refuses every write",
    requirement="PUT, PATCH and DELETE on a published version are refused (4xx) and change nothing; a tool "
                "with no draft refuses a save until a new draft is started.",
    spec=(defining("Opening a published tool shows it read-only, every field and parameter fixed. To change "
                   "anything, start a new draft."),
          contract("`GET /v1/tools/{name}/versions/{n}` | a published version, read-only; any write to it "
                   "is refused")),
)
def published_read_only(target: PlatformTarget) -> Verdict:
    name = target.name("lifecycle_read_only")
    definition = tool(name, target.mock(name, "echo/published"))
    expect_status(target.register(definition), 201, "registering")
    expect_status(target.api("POST", f"/v1/tools/{name}/publish"), 201, "publishing")
    changed = tool(name, target.mock(name, "echo/changed"))
    check = Check()
    for method in ("PUT", "PATCH", "DELETE"):
        reply = target.api(method, f"/v1/tools/{name}/versions/1", changed)
        check.expect(400 <= reply.status < 500, f"{method} version 1", "refused with a 4xx", reply.describe())
    reply = target.api("PUT", f"/v1/tools/{name}/draft", changed)
    check.expect(400 <= reply.status < 500, "saving a draft before starting one", "refused with a 4xx",
                 reply.describe())
    version = target.api("GET", f"/v1/tools/{name}/versions/1")
    check.equal("version 1's URL afterwards", definition["url"],
                ((version.body or {}).get("definition") or {}).get("url"))
    check.equal("versions afterwards", [1], versions(target.read_tool(name)))
    return check.verdict()


@SUITE.case(
    "lifecycle/new-draft-copies",
    title="A new draft starts as a copy of the published version",
    requirement="Starting a new draft after publishing answers 201 with a draft equal to the published "
                "definition; publishing it mints version 2.",
    spec=(defining("start a new draft: it begins as a copy of the published version"),
          defining("publishing that draft mints the next version")),
)
def new_draft_copies(target: PlatformTarget) -> Verdict:
    name = target.name("lifecycle_new_draft")
    expect_status(target.register(tool(name, target.mock(name, "echo"))), 201, "registering")
    expect_status(target.api("POST", f"/v1/tools/{name}/publish"), 201, "publishing")
    check = Check()
    reply = target.api("POST", f"/v1/tools/{name}/draft")
    check.expect(reply.status == 201, "starting a new draft", "HTTP 201", reply.describe())
    published = target.api("GET", f"/v1/tools/{name}/versions/1").body or {}
    check.equal("the new draft", published.get("definition"), draft_definition(target.read_tool(name)))
    reply = target.api("POST", f"/v1/tools/{name}/publish")
    check.expect(reply.status == 201 and published_number(reply) == 2, "publishing the new draft",
                 'HTTP 201 {"version": 2}', reply.describe())
    return check.verdict()


@SUITE.case(
    "lifecycle/name-immutable",
    title="A tool's name cannot change after registering",
    requirement="A save that changes the tool's name is refused with a 4xx, and the tool keeps its name.",
    spec=defining("You set it once when you register the tool, and it cannot change afterward"),
)
def name_immutable(target: PlatformTarget) -> Verdict:
    name = target.name("lifecycle_name")
    expect_status(target.register(tool(name, target.mock(name, "echo"))), 201, "registering")
    renamed = tool(f"{name}_renamed", target.mock(name, "echo"))
    reply = target.api("PUT", f"/v1/tools/{name}/draft", renamed)
    check = Check()
    check.expect(400 <= reply.status < 500, "saving under another name", "refused with a 4xx", reply.describe())
    check.equal("the draft's name", name, draft_definition(target.read_tool(name)).get("name"))
    gone = target.api("GET", f"/v1/tools/{renamed['name']}")
    check.expect(gone.status == 404, "a tool under the new name", "none (HTTP 404)", gone.describe())
    return check.verdict()


@SUITE.case(
    "lifecycle/display-name-free-label",
    title="The display name is a free label, defaulting to the tool name",
    requirement="A blank display name defaults to the tool name; two tools may share a label; relabelling a "
                "published tool succeeds and changes neither its name nor its versions.",
    spec=(defining("If you leave it blank it defaults to the tool name."),
          defining("not unique, so two tools can share a label. You can change it any time."),
          defining("Renaming it does not change the tool name the model calls and does not affect the "
                   "projects that pin the tool.")),
)
def display_name_free_label(target: PlatformTarget) -> Verdict:
    first, second = target.name("lifecycle_label_a"), target.name("lifecycle_label_b")
    check = Check()
    reply = expect_status(target.register(tool(first, target.mock(first, "echo"))), 201, "registering")
    check.equal("display name left blank", first, (reply.body or {}).get("display_name"))
    label = "Customer orders (conformance) ✓"
    expect_status(target.register(tool(second, target.mock(second, "echo"), display_name=label)), 201,
                  "registering a second tool with the same label")
    expect_status(target.api("POST", f"/v1/tools/{first}/publish"), 201, "publishing")
    reply = target.api("PATCH", f"/v1/tools/{first}", {"display_name": label})
    check.expect(reply.status == 200, "relabelling the published tool", "HTTP 200", reply.describe())
    view = target.read_tool(first)
    check.equal("display name after relabelling", label, view.get("display_name"))
    check.equal("the tool's name after relabelling", first, view.get("name"))
    check.equal("versions after relabelling", [1], versions(view))
    check.equal("the second tool's label", label, target.read_tool(second).get("display_name"))
    return check.verdict()
