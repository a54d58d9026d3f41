"""The compiled closures answer exactly as jmespath's own interpreter, on every node type they compile, and an
expression with any other node is left to jmespath whole."""
import jmespath
import pytest

from service.dispatch.evaluate import Unsupported, compile_tree
from service.dispatch.shaping import compile_shape

DATA = [
    {"orders": [{"id": "o-1", "status": "open", "lines": [{"sku": "a", "n": 1}, {"sku": "b", "n": 0}],
                 "address": {"city": "London"}},
                {"id": "o-2", "status": None, "lines": [], "address": None},
                {"id": "o-3", "lines": [[1, 2], [3]], "address": {"city": ""}}, "not an order", 7, None, [1, [2]]],
     "meta": {"a": {"x": 1}, "b": {"x": 2}, "c": 3}, "empty": [], "text": "abc", "n": 0},
    [[1, 2], [3, [4]], 5, None, {"a": 1}],
    {"a": None},
    "a string",
    17,
    None,
    [],
    {},
]
EXPRESSIONS = [
    "orders", "orders[0]", "orders[-1]", "orders[99]", "orders[0].id", "orders[*].id", "orders[*].{id: id, s: status}",
    "orders[*].[id, status]", "orders[*].address.city", "orders[].lines[]", "orders[*].lines[*].sku",
    "orders[*].lines[].sku", "orders[1:3]", "orders[::2]", "orders[::-1].id", "orders[:2].id", "meta.*", "meta.*.x",
    "meta.a.x", "@", "[*]", "[]", "[][]", "[0][1]", "[1][1][0]", "`[1, 2]`", "`{\"k\": 1}`", "'literal'",
    "orders | [0]", "orders[*].id | [1]", "{o: orders[0].id, m: meta.c, t: text}", "[orders[0].id, text, n]",
    "text[0]", "text.a", "n.a", "empty[*]", "empty[]", "orders[*].lines[0].n", "a", "a.b", "{a: a}", "[a, a]",
    "orders[*].address", "meta.*.*", "orders[].*", "orders[*][0]", "orders[][0]",
]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_the_closures_answer_as_jmespath_does(expression):
    parsed = jmespath.compile(expression)
    compiled = compile_tree(parsed.parsed)
    for data in DATA:
        assert compiled(data) == parsed.search(data), (expression, data)


@pytest.mark.parametrize("expression", ["orders[?status == 'open']", "length(orders)", "a || b", "a && b", "!a",
                                        "keys(meta)", "orders[?n > `0`]"])
def test_other_nodes_are_left_to_jmespath_whole(expression):
    with pytest.raises(Unsupported):
        compile_tree(jmespath.compile(expression).parsed)
    assert compile_shape(expression).search(DATA[0]) == jmespath.search(expression, DATA[0])


def test_a_slice_step_of_zero_fails_the_shape_as_jmespath_fails_it():
    from service.dispatch.shaping import ShapeFailed, shape

    with pytest.raises(ShapeFailed):
        shape(compile_shape("[::0]"), "[1, 2]")
