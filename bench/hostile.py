"""The attacker of bench/slow_clients.py, a process of its own: keeps N hostile connections open on loopback.

    python -m bench.hostile '{"host": "127.0.0.1", "port": 8080, "count": 1500, "seconds": 15, "heads": [...],
                              "line": "X-Drip: 1\\r\\n", "drip": 2}'

Each connection sends one of `heads`, then `line` every `drip` seconds, never finishing its request; one the platform
closes or refuses is opened again, so the attacker keeps its number. Bounded: it stops after `seconds`, and prints
`{"opened": N}`, the connections it opened in all.
"""
from gevent import monkey

monkey.patch_all()  # first: this process is all sockets

import json  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402


def attack(spec: dict[str, Any]) -> int:
    """Keep `spec["count"]` hostile connections open until `spec["seconds"]` pass; print how many were opened."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    host, port = spec["host"], spec["port"]
    heads = [h.encode() for h in spec["heads"]]
    drip, line = spec["drip"], spec["line"].encode()
    end = time.monotonic() + spec["seconds"]
    opened = [0]

    def hostile(i: int) -> None:
        while time.monotonic() < end:
            try:
                with socket.create_connection((host, port), timeout=spec["seconds"]) as sock:
                    opened[0] += 1
                    sock.sendall(heads[i % len(heads)])
                    while time.monotonic() < end:
                        gevent.sleep(drip)
                        sock.sendall(line)
            except OSError:
                gevent.sleep(0.2)  # closed or refused: open another, as an attacker would

    workers = [gevent.spawn(hostile, i) for i in range(spec["count"])]
    gevent.joinall(workers, timeout=spec["seconds"] + 5)
    gevent.killall(workers, timeout=2)
    print(json.dumps({"opened": opened[0]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(attack(json.loads(sys.argv[1])))
