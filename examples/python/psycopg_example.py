#!/usr/bin/env python3
"""snowid from plain psycopg 3 (Debian's python3-psycopg), no ORM.

psycopg hands a type it does not know (snowid) over as text; one
register_loader() call makes it a Python int.  A table keyed by
id snowid PRIMARY KEY DEFAULT snowid_nextval(), one INSERT ... RETURNING
of many rows, then the checks of snowid_checks.py: exact as ints, as
text, and through JSON as strings.

Connects with the libpq environment variables (PGHOST, PGPORT,
PGDATABASE, PGUSER, PGPASSWORD).  Exits 0 when every check passes, 1 on a
mismatch, 2 when it cannot run.  The table is dropped at the end unless
SNOWID_EXAMPLE_KEEP=1.

    PGHOST=/var/run/postgresql PGDATABASE=postgres python3 psycopg_example.py
"""

import os

import psycopg
from psycopg.types import TypeInfo
from psycopg.types.numeric import IntLoader

import snowid_checks as checks

ROWS = 20


def main():
    with psycopg.connect("", application_name="snowid-psycopg-example") as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS snowid")
        # snowid values arrive as Python ints from here on.
        conn.adapters.register_loader(TypeInfo.fetch(conn, "snowid").oid, IntLoader)
        conn.execute("DROP TABLE IF EXISTS snowid_psycopg_order")
        conn.execute("""CREATE TABLE snowid_psycopg_order (
                            id       snowid PRIMARY KEY DEFAULT snowid_nextval(),
                            customer text NOT NULL)""")
        returned = [r[0] for r in conn.execute(
            "INSERT INTO snowid_psycopg_order (customer) SELECT unnest(%s::text[]) RETURNING id",
            [["customer %d" % i for i in range(1, ROWS + 1)]])]
        print("inserted %d rows" % len(returned))
        checks.check(len(returned) == ROWS, "%d rows inserted" % ROWS)

        read_back = dict(conn.execute("SELECT id, id::text FROM snowid_psycopg_order"))
        server_json = conn.execute(
            "SELECT json_agg(json_build_object('id', id))::text FROM snowid_psycopg_order").fetchone()[0]
        checks.check_ids(returned, read_back, server_json)

        found = sum(1 for i in returned if conn.execute(
            "SELECT 1 FROM snowid_psycopg_order WHERE id = %s::snowid", [str(i)]).fetchone())
        if os.environ.get("SNOWID_EXAMPLE_KEEP") != "1":
            conn.execute("DROP TABLE snowid_psycopg_order")
    checks.finish(found, len(returned))


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as err:    # no server, no extension, no rights, ...
        checks.fail(err)
