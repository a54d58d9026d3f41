"""Races settle in the database: one winner, clean refusals for the rest, never a 500 or two versions."""
import gevent
import pytest

from service import registry
from service.database import db
from service.errors import ServiceError
from service.models import Tool, ToolVersion
from tests.registry.test_tools_api import ORDERS

RACERS = 8


def race(function, *args):
    """Run `function(*args)` in RACERS greenlets at once, each on its own connection; outcomes in order."""

    def attempt():
        with db.connection_context():
            try:
                function(*args)
                return "won"
            except ServiceError as error:
                return error.status

    greenlets = [gevent.spawn(attempt) for _ in range(RACERS)]
    gevent.joinall(greenlets, raise_error=True)
    return [g.value for g in greenlets]


@pytest.fixture
def acme(app):
    with db.connection_context():
        organization = registry.create_organization("racers")
    return organization


def test_concurrent_registrations_of_one_name_give_one_winner(acme):
    outcomes = race(registry.register_tool, acme, ORDERS, "test")
    assert outcomes.count("won") == 1
    assert sorted(o for o in outcomes if o != "won") == [409] * (RACERS - 1)
    with db.connection_context():
        assert Tool.select().where(Tool.name == "get_orders").count() == 1


def test_concurrent_publishes_of_one_draft_give_one_version(acme):
    with db.connection_context():
        registry.register_tool(acme, ORDERS, "test")
    outcomes = race(registry.publish_tool, acme, "get_orders", "test")
    assert outcomes.count("won") == 1
    assert sorted(o for o in outcomes if o != "won") == [409] * (RACERS - 1)
    with db.connection_context():
        assert [v.number for v in ToolVersion.select()] == [1]
