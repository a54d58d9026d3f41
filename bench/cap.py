"""A 1 GB answer and a gzip bomb: how long the platform takes to decide, and how much memory it grows by,
against reading the same answer whole as a naive client does (requests' `.text`).

The platform's read is service.dispatch's `send` (the call path's own transport, geventhttpclient,
the 16,384-character cap); each read runs in a fresh process so its memory growth is its own.

    python -m bench.cap [--skip-whole]
"""
from __future__ import annotations

import argparse
import json
import subprocess

from bench.common import PYTHON, ROOT, Report, endpoint, json_arg, table
from bench.endpoint import GZIP_BOMB_DECODED_BYTES

GIB = 1 << 30
COMMAND = "python -m bench.cap"
#: The goals: decided within this, growing by less than this.
DECIDE_SECONDS = 0.010
GROWTH_KIB = 2 * 1024


def probe(url: str, mode: str) -> dict:
    done = subprocess.run([PYTHON, "-m", "bench.cap_probe", url, "--mode", mode], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(skip_whole: bool) -> Report:
    report = Report("cap", "The cap: a 1 GB answer and a gzip bomb", COMMAND + (" --skip-whole" if skip_whole else ""))
    answers = {"1 GiB plain answer": f"/bytes/{GIB}",
               f"gzip bomb (~1 MB inflating to {GZIP_BOMB_DECODED_BYTES // GIB} GiB)": "/gzip-bomb"}
    rows = []
    with endpoint(bomb=True) as (base, _pid):
        for label, path in answers.items():
            capped = probe(base + path, "capped")
            rows.append([label, "platform (capped stream)", f"{capped['seconds'] * 1000:.1f} ms",
                         f"{capped['growth_kib'] / 1024:.1f} MiB", capped["result"]])
            met = capped["seconds"] < DECIDE_SECONDS and capped["growth_kib"] < GROWTH_KIB
            report.goal(f"{label}: decided < 10 ms, growth < 2 MB",
                        f"{capped['seconds'] * 1000:.1f} ms, {capped['growth_kib'] / 1024:.2f} MiB", met)
            if not skip_whole:
                whole = probe(base + path, "whole")
                rows.append([label, "naive whole read (requests .text)", f"{whole['seconds'] * 1000:.0f} ms",
                             f"{whole['growth_kib'] / 1024:.0f} MiB", whole["result"]])
    report.tables.append(table(["answer", "reader", "time to decide", "memory growth", "result"], rows))
    report.notes += [
        "Memory growth: the reading process's peak RSS during the read (VmHWM, reset first) over its RSS before.",
        "Time to decide: from sending the request to the outcome, on a kept-alive connection.",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--skip-whole", action="store_true", help="skip the naive whole reads (about 10 s, 3 GB)")
    run(parser.parse_args(args).skip_whole).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
