"""`make run` (`toolgate demo`) as a person runs it: the banner says where to look, a question about orders is
answered through a signed call to the mock backend, and one SIGTERM stops all three processes."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import gevent
import pytest
import requests

from tests.support.head_starts import head_start

TOOLGATE = str(Path(sys.executable).with_name("toolgate"))
#: How long the demo may take to start, and to stop; past either the test fails.
START_BOUND_SECONDS = 90
STOP_BOUND_SECONDS = 20


def _banner(process: subprocess.Popen, stderr: Path) -> str:
    text = ""
    with gevent.Timeout(START_BOUND_SECONDS):
        while "Stop with Ctrl-C" not in text:
            line = process.stdout.readline()
            assert line, f"the demo exited before its banner: {text}{stderr.read_text()}"
            text += line
    return text


def _shown(banner: str, label: str) -> str:
    return re.search(rf"^  {label} +(\S+)", banner, re.MULTILINE).group(1)


@head_start("demo")
def started_demo():
    """`toolgate demo` on free ports, started ahead (three processes to start: seconds; tests.support.head_starts.head_start);
    the process and its banner."""
    folder = Path(tempfile.mkdtemp(prefix="toolgate-demo-"))
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TOOLGATE_")}
    with open(folder / "stderr", "wb") as stderr:
        process = subprocess.Popen([TOOLGATE, "demo", "--port", "0", "--mock-port", "0", "--model-port", "0",
                                    "--state", str(folder / "state")], cwd=folder, env=environment,
                                   stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        banner = _banner(process, folder / "stderr")
        gevent.spawn(process.stdout.read)  # what it prints after the banner, read so that the pipe never fills
        yield process, banner
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def demo(head_starts):
    return head_starts["demo"].get()


def test_the_demo_on_free_ports_answers_a_question_through_the_mock_and_stops_on_sigterm(demo):
    process, banner = demo
    base, mock = _shown(banner, "dashboard").rstrip("/"), _shown(banner, "mock backend")
    assert not base.endswith(":0") and not mock.endswith(":0")
    backend = {"Authorization": f"Bearer {_shown(banner, 'backend key')}"}
    token = requests.post(f"{base}/v1/session-tokens", json={"subject": "alice"}, headers=backend,
                          timeout=30).json()["token"]
    session = {"Authorization": f"Bearer {token}"}
    conversation = requests.post(f"{base}/v1/conversations", json={"project": "shop"}, headers=session,
                                 timeout=30).json()["id"]
    answer = requests.post(f"{base}/v1/conversations/{conversation}/messages", headers=session, timeout=60,
                           json={"text": "Where are my orders?"}).json()
    # The scripted model asked for get_orders; the mock verified the signed call (its issuer has the real
    # port) and answered with alice's orders.
    result = answer["steps"][0]["results"][0]
    assert result["name"] == "get_orders" and "output" in result, answer
    assert answer["reply"].startswith("Here is what I found in your orders")

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=STOP_BOUND_SECONDS) == 0
    try:  # the mock backend was stopped with it
        requests.get(f"{mock}/_health", timeout=5)
        raise AssertionError("the mock backend still answers after the demo stopped")
    except requests.ConnectionError:
        pass
