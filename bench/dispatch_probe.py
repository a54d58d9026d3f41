"""The dispatch layer alone, in a gevent process of its own: CPU per call for building, signing (ES256 or EdDSA),
sending and reading under the cap, as steps of one call and of many. Prints one JSON line.

Run by bench/call_overhead.py: `python -m bench.dispatch_probe URL [--engine geventhttpclient] [--alg EdDSA]`.
"""
from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

from bench.engines import ENGINES, use  # noqa: E402
from service.definition import ToolDefinition  # noqa: E402
from service.dispatch import AddressGuard, call_tool, compile_definition, run_step  # noqa: E402
from service.keys import generate_signing_key, mint_assertion  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--engine", choices=ENGINES, default="geventhttpclient")
    parser.add_argument("--sequential", type=int, default=1_000)
    parser.add_argument("--fanout", type=int, default=100)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--alg", choices=("ES256", "EdDSA"), default="ES256")
    args = parser.parse_args()
    use(args.engine)
    tool = compile_definition(ToolDefinition("fast", "d", "GET", args.url, scope="shared"))
    guard = AddressGuard(["127.0.0.0/8"])
    key = generate_signing_key(args.alg, time.time())

    def sign() -> str:
        return mint_assertion(key, "http://127.0.0.1/orgs/bench", "fast", "bench-user", False, "turn", time.time())

    def call():
        return call_tool(tool, {}, subject=None, guard=guard, sign=sign)

    def step(n: int) -> None:
        outcomes = run_step([call] * n)
        if any(not o.succeeded for o in outcomes):
            raise SystemExit(f"a call failed: {outcomes[0]}")

    step(args.fanout)
    started = time.process_time()
    for _ in range(args.sequential):
        step(1)
    one = (time.process_time() - started) / args.sequential
    started = time.process_time()
    for _ in range(args.steps):
        step(args.fanout)
    many = (time.process_time() - started) / (args.steps * args.fanout)
    print(json.dumps({"cpu_1": one, "cpu_n": many}))


if __name__ == "__main__":
    main()
