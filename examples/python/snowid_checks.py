"""Checks shared by the snowid Python examples.

Each example inserts rows whose ids come from the database default
snowid_nextval(), reads them back, and hands the ids it saw to these
checks: every id keeps every digit as a Python int, as text, and in JSON
when carried as a string; a bare JSON number, read the way JavaScript
reads it (a double), loses digits.  The lines printed are the same in
every example, so test/t/066_python_orm.pl reads them all alike.
"""

import json
import sys

MAX_SAFE_INTEGER = 2**53 - 1    # JavaScript's Number.MAX_SAFE_INTEGER

failures = 0


def check(ok, what):
    """Print one check; count it when it does not hold."""
    global failures
    print(("ok" if ok else "MISMATCH") + ": " + what)
    if not ok:
        failures += 1


def check_ids(returned, read_back, server_json):
    """returned: ids the ORM gave at insert; read_back: {id: id::text}
    as the ORM read the rows again; server_json: the server's own
    json_agg(json_build_object('id', id::snowid)) of the table, as text."""
    n = len(returned)
    check(all(isinstance(i, int) for i in returned),
          "every id arrives as a Python int")
    check(len(set(returned)) == n, "%d distinct ids" % n)
    check(all(i > MAX_SAFE_INTEGER for i in returned),
          "every id is above 2^53 - 1 (JavaScript's Number.MAX_SAFE_INTEGER)")

    kept = sum(1 for i in returned if read_back.get(i) == str(i))
    print("text: %d of %d ids keep every digit" % (kept, n))
    check(kept == n and len(read_back) == n, "ids read back equal id::text")

    # Ids as JSON strings: what an API should send.
    doc = json.dumps([{"id": str(i)} for i in returned])
    back = [int(o["id"]) for o in json.loads(doc)]
    # And the server's JSON: a snowid is a JSON string there.
    server = json.loads(server_json)
    server_kept = all(isinstance(o["id"], str) for o in server) and \
        sorted(int(o["id"]) for o in server) == sorted(returned)
    kept = sum(1 for a, b in zip(returned, back) if a == b)
    print("json: %d of %d ids keep every digit" % (kept if server_kept else 0, n))
    check(kept == n, "json.dumps / json.loads of ids as strings keeps every id")
    check(server_kept, "the server's json_build_object('id', snowid) gives strings, every id kept")

    # A bare JSON number, parsed as JavaScript does (a double).
    rounded = [(i, int(json.loads(json.dumps({"id": i}), parse_int=float)["id"]))
               for i in returned]
    lost = [(i, f) for i, f in rounded if i != f]
    print("bigint as a JSON number: %d of %d ids lose digits in a JavaScript-style parse%s"
          % (len(lost), n, " (e.g. %d -> %d)" % lost[0] if lost else ""))
    check(len(lost) > 0, "a bare JSON number rounds ids (which is why they travel as strings)")


def finish(found, n):
    """Print the lookup line and exit: 0 all held, 1 a mismatch."""
    print("lookup by string id: %d of %d found" % (found, n))
    check(found == n, "every id finds its row when passed back as a string")
    if failures:
        print("FAILED: %d check(s) did not hold" % failures)
        sys.exit(1)
    print("all ids kept every digit")
    sys.exit(0)


def fail(err):
    """The example could not run (no server, no extension, ...): exit 2."""
    code = getattr(err, "pgcode", None) or getattr(getattr(err, "__cause__", None), "pgcode", None)
    print("error: %s%s" % (str(err).strip().splitlines()[0],
                          " (SQLSTATE %s)" % code if code else ""), file=sys.stderr)
    sys.exit(2)
