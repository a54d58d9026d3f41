"""Run the whole suite as two pytest processes side by side, one per core: `python -m tests.shards [PYTEST ARGS]`.

The suite keeps one core busy: its tests run one after another in one process, and what they start (services, the
browser, the kit's platforms) takes the other only now and then. pytest-xdist cannot run it (its workers' queues
and gevent's hub end in LoopExit), so `make test` runs two pytest processes of its own, each over a part of the
folders, with the same arguments. Each is a whole run (its own fixtures, head starts, temporary folders and
PostgreSQL schemas, all named at random), so neither can see the other's state.

The first part names its folders; the second is every other test, so a new folder cannot be left out. Each part's
order is chosen so that a head start (tests.support.head_starts.head_start) has a folder of tests before the one that needs it.
Both parts' output is printed as each ends, the first's first; the exit status is the first failing part's, or 0.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).parent
ROOT = TESTS.parent

#: The first part: the kit's broken platforms and backends and the browser story, with the folders their head starts
#: begin in (the endpoint kit's tests, mostly waiting on its issuer and backends, even the two parts out). Measured on
#: SQLite alone, as `make test` runs on a fresh clone: 126 s and 125 s with the load tests in the second part, 142 s
#: and 92-123 s with them here; with PostgreSQL (CI), whose tests are mostly in the second, the second is longer.
FIRST = ["tests/api", "tests/dispatch", "tests/keys", "tests/dashboard", "tests/conformance",
         "tests/conformance_platform"]
#: Of the second part (everything else), these run first: tests in this process only, while both parts start their
#: head starts' processes (tests that start processes of their own took twice their time then) ...
SECOND_FIRST = ["tests/registry", "tests/ops", "tests/mock_backend", "tests/turns", "tests/load"]
#: ... and these last: the real-deadline step, begun at the part's first test, has had its ten seconds by then.
SECOND_LAST = ["tests/conversations"]


def parts() -> list[list[str]]:
    """The two parts' paths, in the order each runs them."""
    everything = sorted(str(path.relative_to(ROOT)) for path in TESTS.iterdir()
                        if (path.is_dir() and (path / "__init__.py").exists())
                        or (path.name.startswith("test_") and path.suffix == ".py"))
    named = FIRST + SECOND_FIRST + SECOND_LAST
    unknown = [path for path in named if path not in everything]
    if unknown:
        raise SystemExit(f"tests/shards.py names folders that are not there: {unknown}")
    return [FIRST, SECOND_FIRST + [path for path in everything if path not in named] + SECOND_LAST]


def main(arguments: list[str]) -> int:
    """Run both parts with `arguments`; print each part's output; the first failing part's exit status, or 0."""
    with tempfile.TemporaryDirectory(prefix="toolgate-shards-") as folder:
        runs = []
        for index, paths in enumerate(parts()):
            log = open(Path(folder) / f"part{index}.log", "w+")
            runs.append((subprocess.Popen([sys.executable, "-m", "pytest", *arguments, *paths], cwd=ROOT,
                                          stdout=log, stderr=subprocess.STDOUT), log, paths))
        codes = []
        try:
            for index, (process, log, paths) in enumerate(runs):
                codes.append(process.wait())
                log.seek(0)
                print(f"---- part {index + 1} of {len(runs)}: {' '.join(paths)}", flush=True)
                sys.stdout.write(log.read())
                sys.stdout.flush()
        finally:  # interrupted: neither part is left running
            for process, log, _ in runs:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                log.close()
    return next((code for code in codes if code != 0), 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
