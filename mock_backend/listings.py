"""Answers shaped as real APIs shape them, for the platform's response shapes and error fields (docs/shaping.md):

- `orders/<count>`   200: `{"orders": [...]}`, each order with its customer, address and line items (about 500
                     characters each, at most MAX_ORDERS of them): far more than a model needs
- `problem/<code>`   that status with `{"code", "message", "trace"}`: an error body with a field the model must never
                     read (`trace`) beside the ones it may

Like every behaviour, served for the tool named in the URL (`/tools/<tool>/…`), the assertion verified first.
"""
from __future__ import annotations

from flask import Blueprint, jsonify

from mock_backend.behaviours import METHODS, BadKnob, _bad_knob
from mock_backend.guard import serves

blp = Blueprint("listings", __name__, url_prefix="/tools/<tool>")
blp.register_error_handler(BadKnob, _bad_knob)  # a knob past its cap answers 400, as every behaviour's does

MAX_ORDERS = 2_000
#: What `problem/<code>` says in its `trace`: a check looks for it in what reached the model.
TRACE = "Traceback (most recent call last): File \"orders/internal.py\", line 12, in lookup"


def order(i: int) -> dict:
    """The `i`th order, the same on every call."""
    return {"id": f"o-{i}", "status": "shipped" if i % 2 else "open", "total": round(12.5 + i * 1.25, 2),
            "placed_at": "2026-11-30T09:00:00Z",
            "customer": {"name": "Ada Lovelace", "email": "ada@example.com"},
            "address": {"street": "12 Analytical Row", "city": "London", "postcode": "NW1 2AB", "country": "GB"},
            "lines": [{"sku": f"sku-{i}-{n}", "name": "Oat milk, barista edition", "quantity": 2, "price": 2.75}
                      for n in range(2)]}


@blp.route("/orders/<int:count>", methods=METHODS)
@serves()
def orders(tool: str, count: int):
    """`count` orders (at most MAX_ORDERS)."""
    if count > MAX_ORDERS:
        raise BadKnob(f"count must be at most {MAX_ORDERS}")
    return jsonify(orders=[order(i) for i in range(count)])


@blp.route("/problem/<int:code>", methods=METHODS)
@serves()
def problem(tool: str, code: int):
    """`code` (400 to 599) with a JSON problem: a code and a message a model may read, and a trace it must not."""
    if not 400 <= code <= 599:
        raise BadKnob("code must be between 400 and 599")
    response = jsonify(code="no_such_order", message="Order o-404 does not exist.", trace=TRACE)
    response.status_code = code
    return response
