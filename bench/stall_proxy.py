"""The test suite's freezable TCP proxy (tests/load/proxy.py) in a process of its own, for bench/database_stall.py.

    python -m bench.stall_proxy HOST PORT

Prints `port N` once it listens on 127.0.0.1:N; SIGUSR1 freezes it (every byte held both ways, every socket kept
open), SIGUSR2 thaws it; SIGTERM stops it.
"""
from gevent import monkey

monkey.patch_all()  # first: the proxy is gevent's StreamServer

import signal  # noqa: E402
import sys  # noqa: E402

import gevent  # noqa: E402

from tests.load.proxy import TcpProxy  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    host, port = (sys.argv[1:] if argv is None else argv)[:2]
    proxy = TcpProxy((host, int(port)))
    proxy.up()
    gevent.signal_handler(signal.SIGUSR1, proxy.freeze)
    gevent.signal_handler(signal.SIGUSR2, proxy.thaw)
    print(f"port {proxy.port}", flush=True)
    gevent.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
