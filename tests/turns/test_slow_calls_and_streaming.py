"""A call that times out inside a turn, through both adapters at once (on a short deadline, injected), and a turn
watched as server-sent events."""
from __future__ import annotations

import json

import gevent

from tests.support.definitions import gathered, gathering_tool
from tests.turns.conftest import PROVIDERS, shop_tools, slow, turn_platform

#: The injected call deadline: the quick call answers in milliseconds, the stuck one never on its own.
DEADLINE = 0.5
#: A call's clock may read a little under the deadline when the timer fires (the loop's time is cached).
TIMER_SLACK_MS = 100
#: The stuck calls wait at the mock in a group one larger than the turns: they never meet on their own, and a last
#: call lets them go once the turns are over, so the mock need not wait them out when it stops.
STUCK_GROUP = len(PROVIDERS) + 1


def test_a_call_that_times_out_fails_alone_and_the_turn_goes_on(tmp_path):
    with turn_platform(tmp_path, providers=PROVIDERS, call_deadline_seconds=DEADLINE) as platform:
        stuck = gathering_tool("stuck", platform.backend, "stuck", STUCK_GROUP)
        platform.publish([stuck, slow("quick", 0, platform.backend)])
        chats = {}
        for provider in PROVIDERS:
            platform.models[provider].script([[
                {"calls": [{"id": "s", "name": "stuck", "arguments": {}},
                           {"id": "q", "name": "quick", "arguments": {}}]},
                {"text": "The slow one did not answer in time."}]])
            chats[provider] = platform.conversation(provider)

        turns = {provider: gevent.spawn(chat.send, "Check both") for provider, chat in chats.items()}
        gevent.joinall(list(turns.values()), timeout=DEADLINE + 20, raise_error=True)
        # Both stuck calls are still at the mock: one more lets all go, and says they were there at once.
        last = platform.conversation(PROVIDERS[0])
        assert gathered(last.step(last.turn(), ("stuck", {}))[0]) == (True, STUCK_GROUP)

        # Both turns waited on the call deadline together, not one after the other: their steps overlapped.
        steps = [greenlet.value["steps"][0] for greenlet in turns.values()]
        assert max(s["started_at"] for s in steps) < min(s["started_at"] + s["elapsed_ms"] / 1000 for s in steps)
        for provider, greenlet in turns.items():
            result = greenlet.value
            assert result["reply"] == "The slow one did not answer in time.", provider
            timed_out, quick = result["steps"][0]["results"]
            assert timed_out.pop("latency_ms") >= DEADLINE * 1000 - TIMER_SLACK_MS  # held to the deadline
            assert timed_out == {"id": "s", "name": "stuck", "error": {"status": "error", "kind": "timed-out"}}
            assert json.loads(quick["output"]) == {"slept": 0.0}
            given = json.dumps(platform.models[provider].bodies()[-1]["messages"])
            assert '{\\"status\\": \\"error\\", \\"kind\\": \\"timed-out\\"}' in given


def test_a_turn_streams_its_steps_calls_and_reply(platform, provider):
    platform.publish(shop_tools(platform.backend))
    platform.models[provider].script([[
        {"calls": [{"id": "m", "name": "search_products", "arguments": {"q": "milk"}},
                   {"id": "t", "name": "search_products", "arguments": {"q": "tea"}}]},
        {"text": "Milk and tea, found."}]])
    chat = platform.conversation(provider)

    events = chat.stream("Milk and tea?")

    assert [kind for kind, _ in events] == ["turn", "step", "call", "call", "reply"]
    (_, started), (_, step), (_, milk), (_, tea), (_, reply) = events
    assert reply["turn"] == started["turn"] and reply["reply"] == "Milk and tea, found."
    assert step == {"step": 0, "calls": reply["steps"][0]["calls"]}
    assert [milk["id"], tea["id"]] == ["m", "t"] and "Oat milk" in milk["output"] and "Green tea" in tea["output"]
    assert {k: v for k, v in milk.items() if k != "step"} == reply["steps"][0]["results"][0]
    assert [m["role"] for m in chat.history()] == ["user", "assistant", "tool", "assistant"]
