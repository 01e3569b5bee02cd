#!/usr/bin/env python3
"""snowid from SQLAlchemy (1.4, Debian's python3-sqlalchemy, over psycopg2).

The key column is of type snowid with server_default=text('snowid_nextval()'):
the ORM leaves it out of INSERT and reads it back with RETURNING.  A
bulk INSERT ... RETURNING shows the same for many rows at once.  Then the
checks of snowid_checks.py: exact as ints, as text, and through JSON as
strings.

Connects with the libpq environment variables (PGHOST, PGPORT,
PGDATABASE, PGUSER, PGPASSWORD).  Exits 0 when every check passes, 1 on a
mismatch, 2 when it cannot run.  The table is dropped at the end unless
SNOWID_EXAMPLE_KEEP=1.

    PGHOST=/var/run/postgresql PGDATABASE=postgres python3 sqlalchemy_example.py
"""

import os

from sqlalchemy import Column, Text, create_engine, insert, select, text
from sqlalchemy.orm import Session, declarative_base
from sqlalchemy.types import UserDefinedType

import snowid_checks as checks

ROWS = 20


class Snowid(UserDefinedType):
    """The snowid column type.  psycopg2 hands a type it does not know
    over as its text form; this makes it a Python int (exact: Python ints
    have no size limit) and sends ints or digit strings back."""

    cache_ok = True

    def get_col_spec(self, **kw):
        return "snowid"

    def bind_processor(self, dialect):
        return lambda value: None if value is None else int(value)

    def result_processor(self, dialect, coltype):
        return lambda value: None if value is None else int(value)


Base = declarative_base()


class Order(Base):
    __tablename__ = "snowid_sqlalchemy_order"
    id = Column(Snowid, primary_key=True, autoincrement=False,
                server_default=text("snowid_nextval()"))
    customer = Column(Text, nullable=False)


def main():
    # SQLAlchemy 1.4 speaks psycopg2 (its psycopg 3 dialect is 2.0+); with
    # no host in the URL, libpq reads PGHOST, PGPORT, PGDATABASE, PGUSER.
    engine = create_engine("postgresql+psycopg2://", future=True)
    with engine.begin() as conn:
        # Creating the extension needs a superuser; usually it is there.
        conn.execute(text("CREATE EXTENSION IF NOT EXISTS snowid"))
        Base.metadata.drop_all(conn)
        Base.metadata.create_all(conn)

    with Session(engine, future=True) as session:
        # The ORM: one object, flushed; its id comes from RETURNING.
        first = Order(customer="customer 1")
        session.add(first)
        session.flush()
        # Many rows in one INSERT ... RETURNING.
        rest = session.execute(
            insert(Order).values([{"customer": "customer %d" % i} for i in range(2, ROWS + 1)])
            .returning(Order.id)).scalars().all()
        session.commit()
        returned = [first.id] + list(rest)
        print("inserted %d rows" % len(returned))
        checks.check(first.id is not None and len(rest) == ROWS - 1,
                     "flush() and INSERT ... RETURNING give every id")
        checks.check(len(returned) == ROWS, "%d rows inserted" % ROWS)

        default = session.execute(text(
            "SELECT column_default FROM information_schema.columns "
            "WHERE table_name = 'snowid_sqlalchemy_order' AND column_name = 'id'")).scalar()
        checks.check(default == "snowid_nextval()", "the column default is snowid_nextval()")
        from_node = session.execute(text(
            "SELECT count(*) FROM snowid_sqlalchemy_order "
            "WHERE snowid_worker(id) = (SELECT worker_id FROM snowid_status())")).scalar()
        checks.check(from_node == ROWS, "every id carries this node's worker id")

        orm_ids = session.execute(select(Order.id).order_by(Order.id)).scalars().all()
        checks.check(orm_ids == sorted(returned), "the ORM reads back the ids it was given")
        read_back = {int(i): t for i, t in session.execute(
            text("SELECT id::text, id::text FROM snowid_sqlalchemy_order"))}
        server_json = session.execute(text(
            "SELECT json_agg(json_build_object('id', id))::text FROM snowid_sqlalchemy_order")).scalar()
        checks.check_ids(returned, read_back, server_json)

        found = sum(1 for i in returned
                    if session.execute(select(Order).where(Order.id == str(i))).scalar_one_or_none())

    if os.environ.get("SNOWID_EXAMPLE_KEEP") != "1":
        with engine.begin() as conn:
            Base.metadata.drop_all(conn)
    checks.finish(found, len(returned))


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as err:    # no server, no extension, no rights, ...
        checks.fail(err)
