"""Over MCP an agent previews and imports an OpenAPI document into drafts, with the REST API's answers."""

from tests.importing.conftest import document
from tests.mcp.conftest import RawMcp


def test_an_agent_previews_then_imports_drafts_and_publishes_nothing(service):
    mcp = RawMcp(service)
    session = mcp.initialize()
    listed = mcp.request("tools/list", session=session).json()["result"]["tools"]
    tool = next(t for t in listed if t["name"] == "import_openapi")
    assert tool["annotations"]["readOnlyHint"] is False
    assert set(tool["inputSchema"]["properties"]) == {"document", "url", "server", "subject_parameter", "project",
                                                      "operations", "apply", "update_existing", "requires_approval"}

    arguments = {"document": document("commerce.json"), "subject_parameter": "userId"}
    preview = mcp.call_tool(session, "import_openapi", arguments)
    assert preview["isError"] is False
    statuses = {op["tool"]: op["status"] for op in preview["structuredContent"]["operations"]}
    assert statuses == dict.fromkeys(["search_products", "get_orders", "get_order", "get_profile", "add_to_cart"],
                                     "ready")
    assert service.api("GET", "/v1/tools").json()["tools"] == []

    applied = mcp.call_tool(session, "import_openapi", {**arguments, "apply": True, "operations": ["get_orders"]})
    created = [op["tool"] for op in applied["structuredContent"]["operations"] if op["status"] == "created"]
    assert created == ["get_orders"]
    tool = service.api("GET", "/v1/tools/get_orders").json()
    assert tool["versions"] == [] and tool["draft"]["updated_by"].startswith("agent:agent:")
    assert tool["draft"]["definition"]["scope"] == "per_user"


def test_a_document_that_cannot_be_read_is_an_error_result_with_the_field(service):
    mcp = RawMcp(service)
    result = mcp.call_tool(mcp.initialize(), "import_openapi", {"document": "swagger: '2.0'\npaths: {}\n"})
    assert result["isError"] is True
    assert result["structuredContent"]["errors"] == [{
        "field": "document", "rule": "swagger-unsupported",
        "message": "Swagger 2.0 is not supported: convert the document to OpenAPI 3.0 or 3.1 and import that."}]


def test_an_agent_chooses_an_operation_by_an_id_with_spaces_and_an_unknown_one_is_said_about_the_choice(service):
    text = document("commerce.json").replace('"operationId": "get_orders"', '"operationId": "get my orders"')
    assert "get my orders" in text
    mcp = RawMcp(service)
    session = mcp.initialize()
    applied = mcp.call_tool(session, "import_openapi", {"document": text, "subject_parameter": "userId",
                                                         "operations": ["get my orders"], "apply": True})
    assert [op["tool"] for op in applied["structuredContent"]["operations"] if op["status"] == "created"] == [
        "get_my_orders"]

    unknown = mcp.call_tool(session, "import_openapi", {"document": text, "operations": ["get_orders"]})
    assert unknown["isError"] is True
    assert unknown["structuredContent"]["code"] == "operation-unknown"
    assert unknown["structuredContent"]["errors"] == [{
        "field": "operations[0]", "rule": "operation-unknown",
        "message": "No operation of the document has this operationId, or this method and path."}]
