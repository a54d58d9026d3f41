"""One big answer read in a gevent process of its own: the platform's capped read, or a naive whole read.

Run by bench/cap.py: `python -m bench.cap_probe URL --mode capped|whole`. Prints one JSON line with the
seconds taken, the outcome, and the process's memory growth (peak RSS during the read over RSS before).
"""
from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

import requests  # noqa: E402

from bench.common import memory_kib, reset_peak_memory  # noqa: E402
from service.dispatch import AddressGuard, BuiltRequest, send  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--mode", choices=("capped", "whole"), default="capped")
    args = parser.parse_args()
    guard = AddressGuard(["127.0.0.0/8"])
    origin = urlsplit(args.url)
    warm = f"{origin.scheme}://{origin.netloc}/fast"
    send(BuiltRequest("GET", warm), guard=guard, authorization="Bearer bench")  # pools and imports in place
    requests.get(warm, timeout=10).close()
    pid = os.getpid()
    before = memory_kib(pid)
    reset_peak_memory(pid)
    started = time.perf_counter()
    if args.mode == "capped":
        outcome = send(BuiltRequest("GET", args.url), guard=guard, authorization="Bearer bench")
        result = outcome.kind or "ok"
    else:
        response = requests.get(args.url, timeout=120)
        result = f"{len(response.text):,} characters"
    seconds = time.perf_counter() - started
    growth = memory_kib(pid, "VmHWM") - before
    print(json.dumps({"seconds": seconds, "result": result, "growth_kib": growth}))


if __name__ == "__main__":
    main()
