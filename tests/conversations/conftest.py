import pytest

from ..live import live_service, mock_backend


@pytest.fixture
def service(tmp_path):
    with live_service(tmp_path) as running:
        yield running


@pytest.fixture
def backend(service):
    with mock_backend([service.issuer]) as url:
        yield url


def tool(name, url, *, scope="shared", parameters=(), method="GET", **extra):
    """A definition for tests: description filled in, everything else as given."""
    return {"name": name, "description": f"The {name} tool.", "method": method, "url": url, "scope": scope,
            "parameters": list(parameters), **extra}


SUBJECT_IN_PATH = {"name": "subject", "type": "string", "location": "path"}


def publish_project(service, tools, project="shop"):
    """Register every tool, pin all their drafts into `project` and publish it; returns the version number."""
    if service.api("GET", f"/v1/projects/{project}").status_code == 404:
        assert service.api("POST", "/v1/projects", json={"name": project}).status_code == 201
    for definition in tools:
        response = service.api("POST", "/v1/tools", json=definition)
        assert response.status_code == 201, response.text
    pins = [{"tool": t["name"], "version": "draft"} for t in tools]
    response = service.api("PUT", f"/v1/projects/{project}/draft", json={"pins": pins})
    assert response.status_code == 200, response.text
    response = service.api("POST", f"/v1/projects/{project}/publish")
    assert response.status_code == 201, response.text
    return response.json()["version"]


class Conversation:
    """A conversation driven over the API with one session token."""

    def __init__(self, service, token, project="shop", version=None):
        self.service, self.token = service, token
        body = {"project": project} if version is None else {"project": project, "version": version}
        response = service.as_session("POST", "/v1/conversations", token, json=body)
        assert response.status_code == 201, response.text
        self.opened = response.json()
        self.id = self.opened["id"]

    def turn(self):
        response = self.service.as_session("POST", f"/v1/conversations/{self.id}/turns", self.token)
        assert response.status_code == 201, response.text
        return response.json()["turn"]

    def step(self, turn, *calls):
        body = {"calls": [{"id": str(i), "name": name, "arguments": arguments}
                          for i, (name, arguments) in enumerate(calls)]}
        response = self.service.as_session("POST", f"/v1/conversations/{self.id}/turns/{turn}/steps", self.token,
                                           json=body)
        assert response.status_code == 200, response.text
        return response.json()["results"]

    def tools(self, token=None):
        response = self.service.as_session("GET", f"/v1/conversations/{self.id}/tools", token or self.token)
        assert response.status_code == 200, response.text
        return response.json()["tools"]
