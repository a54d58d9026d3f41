"""Pre-flight: before any case runs, make sure the run can prove something, or say in one line why not.

A wrong key or a mock the platform cannot use would otherwise show up as dozens of failed cases, each
a symptom of the one mistake. Each check below is one cheap step through the platform, and a refusal
is a `CouldNotRun` (exit 2) naming what to fix:

- the platform calls the mock backend, and the mock accepts the platform's assertion (one call
  through the platform; the mock's record of the call says why it refused, if it did);
- `--agent-key` is an agent key of the same organization: it reads the pre-flight tool, and may not
  publish (an admin key given as the agent key must not publish anything in the agent cases);
- the platform runs turns with the kit's scripted model (one turn), when the kit has one.

What the pre-flight registers is named with the run's prefix, like everything else of the run.
"""
from __future__ import annotations

import requests

from conformance.platform.client import PlatformTarget, SetupRefused, echoed, tool
from conformance.runner import CouldNotRun

#: The mock's reasons for refusing an assertion that point at how it was started.
MOCK_REASONS = {
    "wrong-issuer": "the mock backend at {mock} does not trust the organization's issuer: start it with "
                    "--issuer {issuer}",
    "unknown-key": "the mock backend at {mock} cannot find the platform's signing key: it must be able to "
                   "fetch {issuer}/.well-known/jwks.json",
}


def preflight(target: PlatformTarget) -> None:
    """Raise CouldNotRun with a one-line reason unless the platform, the mock, the keys and the model fit."""
    try:
        name = _reaches_mock(target)
        if target.agent_key is not None:
            _agent_key(target, name)
        if target.model is not None:
            _runs_turns(target)
    except SetupRefused as refused:
        raise CouldNotRun(f"pre-flight: {refused}") from refused
    except requests.RequestException as exc:
        raise CouldNotRun(f"pre-flight: {type(exc).__name__}: {exc}") from exc


def _reaches_mock(target: PlatformTarget) -> str:
    """Publish one tool calling the mock's echo and call it through the platform; the tool's name."""
    name = target.name("preflight")
    target.publish_project(target.project("preflight"), [tool(name, target.mock(name, "echo"))])
    result = target.conversation(target.project("preflight")).call(name)
    if echoed(result) is not None:
        return name
    failure = result.get("error") or {}
    kind, mock = failure.get("kind"), target.mock_url
    if kind in ("transport-error", "timed-out"):
        raise CouldNotRun(f"pre-flight: the platform cannot reach the mock backend at {mock} (one call through "
                          f"the platform ended {kind}): let the platform call its address "
                          f"(TOOLGATE_ALLOWED_NETWORKS), or give a --mock-url it can reach")
    recorded = target.calls_to(name)
    reason = recorded[-1].get("reason") if recorded else None
    if reason in MOCK_REASONS:
        raise CouldNotRun("pre-flight: " + MOCK_REASONS[reason].format(mock=mock, issuer=target.issuer))
    if reason:
        raise CouldNotRun(f"pre-flight: the mock backend at {mock} refused the platform's assertion ({reason})")
    raise CouldNotRun(f"pre-flight: one call through the platform to the mock backend at {mock} gave {result}, "
                      f"not the mock's echo")


def _agent_key(target: PlatformTarget, name: str) -> None:
    """The agent key reads this organization's tool, and is refused a publish (of a tool that does not exist,
    so an admin key, which would be allowed, still publishes nothing)."""
    agent = target.agent_key
    read = target.api("GET", f"/v1/tools/{name}", key=agent)
    if read.status != 200:
        raise CouldNotRun(f"pre-flight: --agent-key cannot read this organization's tools (GET /v1/tools/{name} "
                          f"answered {read.describe()}): give an agent key of the same organization")
    absent = target.name("preflight_never_registered")
    publish = target.api("POST", f"/v1/tools/{absent}/publish", key=agent)
    if publish.status != 403:
        raise CouldNotRun(f"pre-flight: --agent-key may publish, so it is not an agent key (POST /v1/tools/{absent}"
                          f"/publish answered {publish.status}, where an agent key gets 403): give one made with "
                          f"`toolgate key create --role agent`")


def _runs_turns(target: PlatformTarget) -> None:
    """One turn through the platform, answered by the kit's model with a word only this run uses."""
    if not target.model.answers():
        raise CouldNotRun(f"pre-flight: the scripted model at {target.model.url} does not answer")
    word = f"{target.run}-preflight"
    conversation = target.conversation(target.project("preflight"))
    turn = target.model.turn(conversation, "Are you there?", [{"text": word}])
    reply = turn.reply.body.get("reply") if isinstance(turn.reply.body, dict) else None
    if reply != word:
        raise CouldNotRun(f"pre-flight: the platform does not run turns with the scripted model at "
                          f"{target.model.url} (a turn answered {turn.reply.describe()}): configure it with "
                          f"TOOLGATE_MODEL_BASE_URL={target.model.url}/v1, or leave --model-url out and the "
                          f"turn cases with --skip turn/")
