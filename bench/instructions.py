"""Instructions per one-call step and per call, counted by callgrind: figures a busy or shared machine cannot move.

The CPU times of bench/call_overhead.py swing by 10-20% from one minute to the next on a shared virtual machine,
more than most single changes to the hot path are worth. Callgrind counts the instructions the serving process runs
(user space only; the kernel's work for its system calls is not counted), the same count for the same code and
requests whatever else the machine does, so a change's effect shows to a fraction of a percent. Instructions are not
time: signing's hand-written assembly runs several to a cycle, the interpreter's code fewer, so compare a column with
itself across trees, not one column's count with another's time.

Side by side: `toolgate serve` of this tree and of BEFORE_COMMIT, each under callgrind with counting switched on
only while SEQUENTIAL one-call steps, then FANOUT_STEPS steps of FANOUT calls, are answered (after a warm-up); and the
bare aiohttp client making the same number of GETs of the endpoint in a process of its own, the reference for the
per-call figure.

    python -m bench.instructions [--no-before]     (needs valgrind: `apt-get install valgrind`)
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import aiohttp

from bench.call_overhead import FANOUT, through
from bench.common import BEFORE_COMMIT, PYTHON, Report, endpoint, json_arg, platform, source_at, table

SEQUENTIAL = 300
FANOUT_STEPS = 10
WARMUP = 100
#: Under callgrind a process runs some fifty times slower; its start-up too.
START_SECONDS = 180.0
COMMAND = "python -m bench.instructions"


def callgrind(out: Path) -> list[str]:
    """The command prefix that runs a process under callgrind, counting nothing until told, dumping to `out`."""
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]


def control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True, timeout=120)


def counted(pid: int, out: Path, run: Callable[[], object]) -> int:
    """Instructions process `pid` runs while `run()` runs (counting switched on around it, then dumped and zeroed)."""
    control(pid, "-i", "on")
    run()
    control(pid, "-i", "off")
    before = set(glob.glob(f"{out}*"))
    control(pid, "-d")
    dumped = set(glob.glob(f"{out}*")) - before
    return sum(_totals(Path(path)) for path in dumped)


def _totals(dump: Path) -> int:
    # A dump made while counting is off may say "summary: 0" before its "totals:" line: the larger is the count.
    counts = [int(line.split()[1]) for line in dump.read_text(errors="replace").splitlines()
              if line.startswith(("totals:", "summary:"))]
    if not counts:
        raise RuntimeError(f"no totals in {dump}")
    return max(counts)


def platform_counts(tmp: Path, root: Path, name: str, tool_url: str) -> tuple[float, float]:
    """(instructions per one-call step, per call in steps of FANOUT) of `toolgate serve` from `root`."""
    out = tmp / f"callgrind.{name}"
    with platform(tmp, root=root, under=callgrind(out), start_seconds=START_SECONDS) as running:
        target = through(name, running, tool_url)

        async def measure() -> tuple[float, float]:
            # One session throughout, warmed with a step of FANOUT too: no connection is opened while counting.
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
                for _ in range(WARMUP):
                    await target.one(session)
                await target.many(session)
                loop = asyncio.get_running_loop()

                def steps(one: int, many: int) -> Callable[[], None]:
                    async def run() -> None:
                        for _ in range(one):
                            await target.one(session)
                        for _ in range(many):
                            await target.many(session)
                    return lambda: asyncio.run_coroutine_threadsafe(run(), loop).result()

                # The counting is switched from a thread, so this loop goes on serving the steps meanwhile.
                per_step = await asyncio.to_thread(counted, running.pid, out, steps(SEQUENTIAL, 0))
                per_call = await asyncio.to_thread(counted, running.pid, out, steps(0, FANOUT_STEPS))
            return per_step / SEQUENTIAL, per_call / (FANOUT_STEPS * FANOUT)

        return asyncio.run(measure())


def direct_counts(tmp: Path, tool_url: str) -> float:
    """Instructions per GET of the bare aiohttp client, in a process of its own under callgrind."""
    out = tmp / "callgrind.direct"
    process = subprocess.Popen([*callgrind(out), PYTHON, "-m", "bench.instructions", "--get", tool_url],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None and process.stdin is not None
        if process.stdout.readline().strip() != "warm":
            raise RuntimeError("the direct client did not start")

        def gets() -> None:
            process.stdin.write("go\n")
            process.stdin.flush()
            if process.stdout.readline().strip() != "done":
                raise RuntimeError("the direct client stopped")

        return counted(process.pid, out, gets) / (FANOUT_STEPS * FANOUT)
    finally:
        process.kill()
        process.wait()


def _get_loop(url: str) -> None:
    """The direct client's process: warm up, then on "go" make FANOUT_STEPS x FANOUT GETs at FANOUT at a time."""
    async def run() -> None:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            async def get() -> None:
                async with session.get(url) as response:
                    await response.read()

            for _ in range(WARMUP):
                await get()
            await asyncio.gather(*(get() for _ in range(FANOUT)))  # its connections open before the counting
            print("warm", flush=True)
            sys.stdin.readline()
            for _ in range(FANOUT_STEPS):
                await asyncio.gather(*(get() for _ in range(FANOUT)))
            print("done", flush=True)
            sys.stdin.readline()

    asyncio.run(run())


def run(before: bool, commit: str = BEFORE_COMMIT) -> Report:
    report = Report("instructions", "Instructions per one-call step and per call (callgrind)",
                    COMMAND + ("" if commit == BEFORE_COMMIT else f" --before {commit}"))
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        report.notes.append("Not measured: valgrind is not installed here (`apt-get install valgrind`).")
        return report
    rows = []
    with contextlib.ExitStack() as stack:
        base, _pid = stack.enter_context(endpoint())
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        tool = f"{base}/fast"
        direct = direct_counts(tmp, tool)
        rows.append(["direct (aiohttp)", "-", f"{direct / 1000:,.0f}"])
        now = platform_counts(tmp, Path(__file__).resolve().parent.parent, "platform", tool)
        rows.append(["platform", f"{now[0] / 1000:,.0f}", f"{now[1] / 1000:,.0f}"])
        tree = stack.enter_context(source_at(commit)) if before else None
        if tree is not None:
            then = platform_counts(tmp, tree, "before", tool)
            rows.append([f"before ({commit})", f"{then[0] / 1000:,.0f}", f"{then[1] / 1000:,.0f}"])
            report.notes.append(f"This tree runs {then[0] / now[0]:.2f} x fewer instructions a one-call step than "
                                f"{commit}, {then[1] / now[1]:.2f} x fewer a call in steps of {FANOUT}.")
        elif before:
            report.notes.append(f"The tree at {commit} could not be taken from git here.")
    report.tables.append(table(["column", "k instructions per one-call step", f"k instructions per call, steps of "
                                f"{FANOUT}"], rows))
    report.notes += [
        f"Counted in the serving process (user space) over {SEQUENTIAL} sequential one-call steps and {FANOUT_STEPS} "
        f"steps of {FANOUT} calls, after {WARMUP} warm-up steps; direct: the bare aiohttp client's own process over "
        f"{FANOUT_STEPS * FANOUT} GETs, {FANOUT} at a time.",
        "The same code and requests give the same counts to within a fraction of a percent, whatever else the "
        "machine runs; instructions are not time (see the module's docstring).",
    ]
    return report


def main(argv: list[str] | None = None) -> int:
    args, json_path = json_arg(argv)
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--no-before", action="store_true", help="do not run the tree before")
    parser.add_argument("--before", default=BEFORE_COMMIT, metavar="COMMIT",
                        help=f"the tree to compare with (default {BEFORE_COMMIT})")
    parser.add_argument("--get", metavar="URL", help=argparse.SUPPRESS)  # the direct client's own process
    options = parser.parse_args(args)
    if options.get:
        _get_loop(options.get)
        return 0
    run(not options.no_before, options.before).emit(json_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
