"""The call log's reads beside N records: the median of each request issue 38 measured, through the app.

    python -m bench.call_log_probe sqlite:///calls.db 1000000            # migrates, writes the records, measures
    python -m bench.call_log_probe sqlite:///calls.db 1000000 --reuse    # measures a database written before

A quick probe for one engine and one size (the curves side by side are bench/scale.py's); it prints one line per
request, its median over 15 runs (the Calls screen: `find_calls` for a page of 50, as the screen asks). The records
are `bench.call_log_rows`'s, over the last 30 days; PostgreSQL URLs take `?options=-csearch_path%3DSCHEMA`.
"""
from gevent import monkey

monkey.patch_all()

from psycogreen.gevent import patch_psycopg  # noqa: E402

patch_psycopg()

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402

from bench.call_log_rows import write_call_records  # noqa: E402
from service.config import Config  # noqa: E402
from service.limits import SECONDS_PER_DAY  # noqa: E402

RUNS = 15


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("database_url")
    parser.add_argument("records", type=int)
    parser.add_argument("--reuse", action="store_true", help="the records are there already")
    args = parser.parse_args()

    from service import create_app
    from service.database import db, make_database
    from service.migrations import migrate
    from service.provisioning import create_organization_with_keys
    from service.records import calls
    from service.registry import get_organization
    from service.registry.organizations import create_api_key

    config = replace(Config.from_env(), database_url=args.database_url, secret_key="probe-" * 8)
    if not args.reuse:
        database = make_database(args.database_url, pooled=False)
        with database.connection_context():
            migrate(database)
    app = create_app(config)
    with db.connection_context():
        organization = get_organization("acme")
        if organization is None:
            key = create_organization_with_keys(config, "acme")
            organization = get_organization("acme")
        else:
            key = create_api_key(organization, "admin")
    if not args.reuse:
        started = time.monotonic()
        write_call_records(args.database_url, organization.id, args.records)
        print(f"wrote {args.records:,} records in {time.monotonic() - started:.0f} s")
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}

    def median(path: str) -> tuple[float, dict]:
        spent = []
        for _ in range(RUNS):
            started = time.perf_counter()
            response = client.get(path, headers=headers)
            spent.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, (path, response.status_code, response.data[:300])
        return statistics.median(spent), response.json

    newest = median("/v1/calls?limit=1")[1]["calls"][0]["id"]
    now = time.time()
    for path in ("/v1/calls", "/v1/calls?kind=timed-out", f"/v1/calls?before={newest // 2}", "/v1/calls?tool=tool_7",
                 "/v1/calls?subject=user_77", "/v1/calls?kind=ok", "/v1/calls?conversation=c1000",
                 "/v1/calls?turn=t1000", f"/v1/calls?since={now - 20 * SECONDS_PER_DAY:.0f}"
                 f"&until={now - 10 * SECONDS_PER_DAY:.0f}", "/v1/calls?tool=tool_7&kind=refused"):
        spent, answer = median(path)
        print(f"{spent:8.1f} ms  {path}  ({len(answer['calls'])} calls)")
    spent_list = []
    for _ in range(RUNS):
        with db.connection_context():
            started = time.perf_counter()
            calls.find_calls(organization, calls.CallQuery(limit=51))
            calls.count_calls(organization, calls.CallQuery())
            spent_list.append((time.perf_counter() - started) * 1000)
    print(f"{statistics.median(spent_list):8.1f} ms  the Calls screen's reads (a page of 50 and the bounded count)")


if __name__ == "__main__":
    main()
