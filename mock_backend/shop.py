"""A small demo shop: the per-user and shared tools an integrator would expose to the platform.

Authorization is the backend's own, applied after the assertion is verified: a per-user route
serves only the subject the assertion names (the path subject must equal `sub`), and anonymous
sessions may search products but not see anyone's orders, profile or cart.

Customers: `alice` and `bob` have orders and profiles; any other subject has no orders and no
profile (404), and may still fill a cart.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from flask import Blueprint, current_app, jsonify, request

from mock_backend.guard import serves, verified_claims

blp = Blueprint("shop", __name__)

#: Where create_app keeps the carts (per app, in memory).
CARTS_KEY = "mock_backend.carts"

#: Bounds, so a caller cannot grow the mock's memory without limit.
MAX_IDS_PER_ADD = 50
MAX_CARTS = 10_000

PRODUCTS = {
    "p1": {"id": "p1", "name": "Oat milk", "description": "Barista oat milk, 1 l", "price": 2.49},
    "p2": {"id": "p2", "name": "Sourdough loaf", "description": "Whole-wheat sourdough, 800 g", "price": 4.2},
    "p3": {"id": "p3", "name": "Peanut butter", "description": "Crunchy peanut butter, 350 g", "price": 3.75},
    "p4": {"id": "p4", "name": "Green tea", "description": "Sencha green tea, 50 bags", "price": 6.9},
    "p5": {"id": "p5", "name": "Dark chocolate", "description": "85% dark chocolate, 100 g", "price": 2.99},
    "p6": {"id": "p6", "name": "Olive oil", "description": "Extra virgin olive oil, 750 ml", "price": 11.5},
    "p7": {"id": "p7", "name": "Almond milk", "description": "Unsweetened almond milk, 1 l", "price": 2.79},
    "p8": {"id": "p8", "name": "Espresso beans", "description": "Dark roast espresso beans, 1 kg", "price": 18.0},
}

PROFILES = {
    "alice": {"name": "Alice Martin", "loyalty_tier": "gold", "dietary_notes": ["vegetarian"]},
    "bob": {"name": "Bob Okafor", "loyalty_tier": "silver", "dietary_notes": ["peanut allergy"]},
}

# Each order has an owner; the owner is the backend's business and is not returned.
ORDERS = {
    "o-1001": {"owner": "alice", "status": "open", "placed": "2025-05-02",
               "items": [{"product_id": "p1", "quantity": 2}, {"product_id": "p5", "quantity": 1}],
               "total": 7.97},
    "o-1002": {"owner": "alice", "status": "shipped", "placed": "2025-04-18",
               "items": [{"product_id": "p8", "quantity": 1}], "total": 18.0},
    "o-2001": {"owner": "bob", "status": "shipped", "placed": "2025-04-30",
               "items": [{"product_id": "p6", "quantity": 1}, {"product_id": "p2", "quantity": 1}],
               "total": 15.7},
}

ORDER_STATUSES = ("open", "shipped")


def _error(status: int, message: str):
    response = jsonify(error=message)
    response.status_code = status
    return response


def for_subject(view: Callable) -> Callable:
    """Let a per-user view run only for the subject the verified assertion names."""

    @functools.wraps(view)
    def checked(subject: str, **kwargs: Any):
        claims = verified_claims()
        if claims is not None:  # None only in the broken `no-auth` mode, where nobody is checked
            if claims.get("anon") is True:
                return _error(403, "sign in to see orders")
            if claims["sub"] != subject:
                return _error(403, "not your data")
        return view(subject=subject, **kwargs)

    return checked


def _public_order(order_id: str) -> dict[str, Any]:
    order = ORDERS[order_id]
    return {"id": order_id, **{key: value for key, value in order.items() if key != "owner"}}


@blp.get("/users/<subject>/orders")
@serves("get_orders")
@for_subject
def get_orders(subject: str):
    """That subject's orders, optionally only the open or the shipped ones."""
    status = request.args.get("status")
    if status is not None and status not in ORDER_STATUSES:
        return _error(400, "status must be open or shipped")
    orders = [_public_order(order_id) for order_id, order in ORDERS.items()
              if order["owner"] == subject and status in (None, order["status"])]
    return jsonify(subject=subject, orders=orders)


@blp.get("/users/<subject>/orders/<order_id>")
@serves("get_order")
@for_subject
def get_order(subject: str, order_id: str):
    """One of the subject's orders: 404 when it does not exist, 403 when it is someone else's."""
    order = ORDERS.get(order_id)
    if order is None:
        return _error(404, "no such order")
    if order["owner"] != subject:
        return _error(403, "not your data")
    return jsonify(_public_order(order_id))


@blp.get("/users/<subject>/profile")
@serves("get_profile")
@for_subject
def get_profile(subject: str):
    """Name, loyalty tier and dietary notes: facts a session-start tool gives the model up front."""
    profile = PROFILES.get(subject)
    if profile is None:
        return _error(404, "no such customer")
    return jsonify(subject=subject, **profile)


@blp.get("/products")
@serves("search_products")
def search_products():
    """Products whose name or description contains `q`, at most `max_price` (a shared tool)."""
    words = request.args.get("q", "").strip().lower()
    max_price = request.args.get("max_price")
    if max_price is not None:
        try:
            max_price = float(max_price)
        except ValueError:
            max_price = math.nan
        if not math.isfinite(max_price) or max_price < 0:
            return _error(400, "max_price must be a non-negative number")
    found = [product for product in PRODUCTS.values()
             if words in f"{product['name']} {product['description']}".lower()
             and (max_price is None or product["price"] <= max_price)]
    return jsonify(products=found)


@blp.post("/users/<subject>/cart")
@serves("add_to_cart")
@for_subject
def add_to_cart(subject: str):
    """Add products to the subject's cart; answers the whole cart."""
    body = request.get_json(silent=True)
    ids = body.get("product_ids") if isinstance(body, dict) else None
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        return _error(400, "product_ids must be a non-empty list of product ids")
    if len(ids) > MAX_IDS_PER_ADD:
        return _error(400, f"at most {MAX_IDS_PER_ADD} products at once")
    unknown = sorted({i for i in ids if i not in PRODUCTS})
    if unknown:
        return _error(404, f"no such product: {', '.join(unknown)}")
    carts: dict[str, dict[str, int]] = current_app.extensions[CARTS_KEY]
    if subject not in carts and len(carts) >= MAX_CARTS:
        carts.pop(next(iter(carts)))  # forget the oldest cart
    cart = carts.setdefault(subject, {})
    for product_id in ids:
        cart[product_id] = cart.get(product_id, 0) + 1
    items = [{"product_id": pid, "name": PRODUCTS[pid]["name"], "price": PRODUCTS[pid]["price"],
              "quantity": quantity} for pid, quantity in cart.items()]
    total = round(sum(item["price"] * item["quantity"] for item in items), 2)
    return jsonify(subject=subject, items=items, total=total)
