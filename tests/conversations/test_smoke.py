def test_smoke(service, backend):
    tools = [
        {"name": "get_orders", "description": "Orders.", "method": "GET", "url": backend + "/users/{subject}/orders",
         "scope": "per_user", "parameters": [{"name": "subject", "type": "string", "location": "path"}]},
        {"name": "get_profile", "description": "Profile.", "method": "GET", "url": backend + "/users/{subject}/profile",
         "scope": "per_user", "runs_at_session_start": True,
         "parameters": [{"name": "subject", "type": "string", "location": "path"}]},
    ]
    assert service.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    for t in tools:
        r = service.api("POST", "/v1/tools", json=t); assert r.status_code == 201, r.text
    r = service.api("PUT", "/v1/projects/shop/draft", json={"pins": [{"tool": "get_orders", "version": "draft"}, {"tool": "get_profile", "version": "draft"}]})
    assert r.status_code == 200, r.text
    assert service.api("POST", "/v1/projects/shop/publish").status_code == 201
    token = service.session_token("alice")
    r = service.as_session("POST", "/v1/conversations", token, json={"project": "shop"})
    print(r.status_code, r.text)
    assert r.status_code == 201
    cid = r.json()["id"]
    turn = service.as_session("POST", f"/v1/conversations/{cid}/turns", token).json()["turn"]
    r = service.as_session("POST", f"/v1/conversations/{cid}/turns/{turn}/steps", token, json={"calls": [
        {"id": "1", "name": "get_orders", "arguments": {"subject": "bob"}}, {"id": "2", "name": "nope", "arguments": {}}]})
    print(r.status_code, r.text)
    assert r.status_code == 200
