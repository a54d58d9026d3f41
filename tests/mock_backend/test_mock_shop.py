"""The demo shop: each tool's data, the subject policy and the anonymous policy."""
from __future__ import annotations

import pytest

PER_USER_ROUTES = [
    ("GET", "/users/{subject}/orders", "get_orders", None),
    ("GET", "/users/{subject}/orders/o-1001", "get_order", None),
    ("GET", "/users/{subject}/profile", "get_profile", None),
    ("POST", "/users/{subject}/cart", "add_to_cart", {"product_ids": ["p1"]}),
]


def call(mock_client, harness, method, path, tool, body=None, **claims):
    return mock_client.open(path, method=method, json=body, headers=harness.bearer(tool, **claims))


def test_orders_are_the_subjects_own(mock_client, harness):
    body = call(mock_client, harness, "GET", "/users/bob/orders", "get_orders", sub="bob").get_json()
    assert body["subject"] == "bob"
    assert [order["id"] for order in body["orders"]] == ["o-2001"]
    assert "owner" not in body["orders"][0]


@pytest.mark.parametrize("status,ids", [("open", ["o-1001"]), ("shipped", ["o-1002"])])
def test_orders_filter_by_status(mock_client, harness, status, ids):
    response = call(mock_client, harness, "GET", f"/users/alice/orders?status={status}", "get_orders")
    assert [order["id"] for order in response.get_json()["orders"]] == ids


def test_orders_refuse_an_unknown_status(mock_client, harness):
    response = call(mock_client, harness, "GET", "/users/alice/orders?status=lost", "get_orders")
    assert response.status_code == 400


def test_a_subject_without_orders_has_none(mock_client, harness):
    response = call(mock_client, harness, "GET", "/users/carol/orders", "get_orders", sub="carol")
    assert response.status_code == 200 and response.get_json()["orders"] == []


@pytest.mark.parametrize("method,path,tool,body", PER_USER_ROUTES)
def test_another_subjects_data_is_refused(mock_client, harness, method, path, tool, body):
    response = call(mock_client, harness, method, path.format(subject="bob"), tool, body, sub="alice")
    assert (response.status_code, response.get_json()) == (403, {"error": "not your data"})


@pytest.mark.parametrize("method,path,tool,body", PER_USER_ROUTES)
def test_anonymous_sessions_are_asked_to_sign_in(mock_client, harness, method, path, tool, body):
    response = call(mock_client, harness, method, path.format(subject="anon-7"), tool, body,
                    sub="anon-7", anon=True)
    assert (response.status_code, response.get_json()) == (403, {"error": "sign in to see orders"})


def test_anonymous_sessions_may_search_products(mock_client, harness):
    response = call(mock_client, harness, "GET", "/products?q=milk", "search_products", sub="anon-7", anon=True)
    assert response.status_code == 200
    assert [product["id"] for product in response.get_json()["products"]] == ["p1", "p7"]


def test_one_order(mock_client, harness):
    response = call(mock_client, harness, "GET", "/users/alice/orders/o-1002", "get_order")
    assert response.get_json() == {"id": "o-1002", "status": "shipped", "placed": "2025-04-18",
                                   "items": [{"product_id": "p8", "quantity": 1}], "total": 18.0}


def test_someone_elses_order_is_forbidden_and_an_unknown_one_not_found(mock_client, harness):
    assert call(mock_client, harness, "GET", "/users/alice/orders/o-2001", "get_order").status_code == 403
    assert call(mock_client, harness, "GET", "/users/alice/orders/o-9999", "get_order").status_code == 404


def test_profile(mock_client, harness):
    response = call(mock_client, harness, "GET", "/users/alice/profile", "get_profile")
    assert response.get_json() == {"subject": "alice", "name": "Alice Martin", "loyalty_tier": "gold",
                                   "dietary_notes": ["vegetarian"]}
    assert call(mock_client, harness, "GET", "/users/carol/profile", "get_profile", sub="carol").status_code == 404


def test_search_by_text_and_price(mock_client, harness):
    response = call(mock_client, harness, "GET", "/products?q=MILK&max_price=2.5", "search_products")
    assert [product["id"] for product in response.get_json()["products"]] == ["p1"]
    everything = call(mock_client, harness, "GET", "/products", "search_products").get_json()["products"]
    assert len(everything) == 8


@pytest.mark.parametrize("max_price", ["cheap", "nan", "-1", "inf"])
def test_search_refuses_a_bad_price(mock_client, harness, max_price):
    response = call(mock_client, harness, "GET", f"/products?max_price={max_price}", "search_products")
    assert response.status_code == 400


def test_cart_accumulates(mock_client, harness):
    call(mock_client, harness, "POST", "/users/alice/cart", "add_to_cart", {"product_ids": ["p1", "p5"]})
    response = call(mock_client, harness, "POST", "/users/alice/cart", "add_to_cart", {"product_ids": ["p1"]})
    body = response.get_json()
    assert [(item["product_id"], item["quantity"]) for item in body["items"]] == [("p1", 2), ("p5", 1)]
    assert body["total"] == 7.97
    # Carts are per subject.
    bob = call(mock_client, harness, "POST", "/users/bob/cart", "add_to_cart", {"product_ids": ["p2"]}, sub="bob")
    assert [item["product_id"] for item in bob.get_json()["items"]] == ["p2"]


@pytest.mark.parametrize("body,status", [
    ({"product_ids": ["p404"]}, 404),
    ({"product_ids": []}, 400),
    ({"product_ids": "p1"}, 400),
    ({"product_ids": ["p1"] * 51}, 400),
    (["p1"], 400),
])
def test_cart_refuses_bad_input(mock_client, harness, body, status):
    response = call(mock_client, harness, "POST", "/users/alice/cart", "add_to_cart", body)
    assert response.status_code == status


def test_a_route_serves_one_tool_whatever_the_token_says(mock_client, harness):
    # An assertion for add_to_cart cannot read orders, even for its own subject.
    response = call(mock_client, harness, "GET", "/users/alice/orders", "add_to_cart")
    assert response.get_json()["reason"] == "wrong-audience"
