from gevent import monkey

monkey.patch_all()  # first, before anything imports socket, ssl or threading (the `toolgate` process entry point)

try:  # PostgreSQL's driver blocks in C; make its waits cooperative too.
    from psycogreen.gevent import patch_psycopg

    patch_psycopg()
except ImportError:  # pragma: no cover - psycogreen is a declared dependency
    pass

from service.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
