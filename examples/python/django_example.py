#!/usr/bin/env python3
"""snowid from Django (3.2, Debian's python3-django, over psycopg2).

A model whose primary key is filled by the database default
snowid_nextval() (snowid_django/models.py), created by a migration;
save() and bulk_create() both return the ids the database made.  The ids
then go through the checks of snowid_checks.py: exact as ints, as text,
and through JSON as strings.

Connects with the libpq environment variables (PGHOST, PGPORT,
PGDATABASE, PGUSER, PGPASSWORD).  Exits 0 when every check passes, 1 on a
mismatch, 2 when it cannot run.  The table is dropped at the end (the
migration reversed) unless SNOWID_EXAMPLE_KEEP=1.

    PGHOST=/var/run/postgresql PGDATABASE=postgres python3 django_example.py
"""

import os

import django
from django.conf import settings

import snowid_checks as checks

ROWS = 20

settings.configure(
    DATABASES={"default": {
        # Django 3.2's backend is psycopg2 (psycopg 3 needs Django 4.2+).
        # Empty HOST, PORT, USER: libpq reads PGHOST, PGPORT, PGUSER.
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("PGDATABASE", "postgres"),
    }},
    INSTALLED_APPS=["snowid_django"],
    USE_TZ=True,
)


def main():
    django.setup()
    from django.core import serializers
    from django.core.management import call_command
    from django.db import connection
    from snowid_django.models import Order

    call_command("migrate", "snowid_django", "zero", verbosity=0)
    call_command("migrate", "snowid_django", verbosity=0)

    # One save(): the id comes back from INSERT ... RETURNING.
    first = Order.objects.create(customer="customer 1")
    # bulk_create() sets the ids of all the objects it inserts.
    rest = Order.objects.bulk_create(
        [Order(customer="customer %d" % i) for i in range(2, ROWS + 1)])
    returned = [first.id] + [o.id for o in rest]
    print("inserted %d rows" % len(returned))
    checks.check(first.id is not None and all(o.id is not None for o in rest),
                 "save() and bulk_create() set every id")
    checks.check(len(returned) == ROWS, "%d rows inserted" % ROWS)

    with connection.cursor() as cur:
        cur.execute("SELECT column_default FROM information_schema.columns "
                    "WHERE table_name = 'snowid_django_order' AND column_name = 'id'")
        default = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM snowid_django_order "
                    "WHERE snowid_worker(id::snowid) = (SELECT worker_id FROM snowid_status())")
        from_node = cur.fetchone()[0]
        cur.execute("SELECT id, id::text FROM snowid_django_order")
        read_back = dict(cur.fetchall())
        cur.execute("SELECT json_agg(json_build_object('id', id::snowid))::text "
                    "FROM snowid_django_order")
        server_json = cur.fetchone()[0]
    checks.check(default == "snowid_nextval()", "the column default is snowid_nextval()")
    checks.check(from_node == ROWS, "every id carries this node's worker id")

    checks.check(list(Order.objects.order_by("id").values_list("id", flat=True)) == sorted(returned),
                 "the ORM reads back the ids it was given")
    # Django's own serializer writes the key as a bare number.
    dumped = serializers.serialize("json", Order.objects.order_by("id"))
    checks.check(all(str(i) in dumped for i in returned),
                 "serializers.serialize('json') writes every digit (as numbers)")
    checks.check_ids(returned, read_back, server_json)

    found = sum(1 for i in returned if Order.objects.filter(pk=str(i)).exists())
    if os.environ.get("SNOWID_EXAMPLE_KEEP") != "1":
        call_command("migrate", "snowid_django", "zero", verbosity=0)
    checks.finish(found, len(returned))


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as err:    # no server, no extension, no rights, ...
        checks.fail(err)
