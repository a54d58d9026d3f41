"""Under several worker processes, a scrape of any one reports the calls of all of them."""
import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).parents[2]

OBSERVE = """
from service.records import metrics
row = {"kind": None, "tool": "get_orders", "latency_ms": 20.0, "size_chars": 10}
metrics.observe_step("acme", [row, {**row, "kind": "refused", "size_chars": None}], session_start=False)
"""
SCRAPE = "import sys; from service.records import metrics; sys.stdout.write(metrics.exposition()[0].decode())"


def run(code, directory):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=True).stdout


def test_a_scrape_sums_every_worker_process(tmp_path):
    for _ in range(2):  # two "workers", each recording one step and exiting
        run(OBSERVE, tmp_path)
    text = run(SCRAPE, tmp_path)
    calls = {tuple(sorted(s.labels.items())): s.value for f in text_string_to_metric_families(text)
             for s in f.samples if s.name == "toolgate_calls_total"}
    assert calls[(("kind", "ok"), ("org", "acme"), ("tool", "get_orders"))] == 2
    assert calls[(("kind", "refused"), ("org", "acme"), ("tool", "get_orders"))] == 2
    steps = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples
             if s.name == "toolgate_step_calls_sum"}
    assert steps["toolgate_step_calls_sum"] == 4
