#!/usr/bin/env node
// snowid from Node.js with node-postgres (npm "pg").
//
// Connects with the usual libpq environment variables (PGHOST, PGPORT,
// PGDATABASE, PGUSER, PGPASSWORD; PGHOST may be a Unix socket directory),
// creates a table whose key is `id snowid PRIMARY KEY DEFAULT
// snowid_nextval()`, inserts rows, and reads the ids back as text and as
// JSON.  It checks that every id keeps every digit, and shows what would
// happen with a plain bigint in JSON: JavaScript numbers are doubles, exact
// only up to 2^53 - 1, and snowids are far above that.
//
// Exits 0 when every check passes, 1 on a mismatch, 2 when it cannot run
// (no server, no extension, ...).
//
//   npm ci && PGHOST=/var/run/postgresql PGDATABASE=postgres node example.js
//
// The table (default snowid_node_example, or $SNOWID_EXAMPLE_TABLE) is
// dropped at the end unless SNOWID_EXAMPLE_KEEP=1.

'use strict';

const { Client } = require('pg');

const TABLE = process.env.SNOWID_EXAMPLE_TABLE || 'snowid_node_example';
const ROWS = 20;

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok' : 'MISMATCH'}: ${what}`);
  if (!ok) failures++;
}

async function main() {
  // pg reads PGHOST, PGPORT, PGDATABASE, PGUSER and PGPASSWORD itself.
  const client = new Client({ application_name: 'snowid-node-example' });
  await client.connect();
  try {
    await run(client);
  } finally {
    await client.end();
  }
}

async function run(client) {
  const table = client.escapeIdentifier(TABLE);

  // The extension needs superuser to create; usually it is already there.
  await client.query('CREATE EXTENSION IF NOT EXISTS snowid');
  await client.query(`DROP TABLE IF EXISTS ${table}`);
  await client.query(`
    CREATE TABLE ${table} (
      id       snowid PRIMARY KEY DEFAULT snowid_nextval(),
      customer text NOT NULL
    )`);

  // One multi-row INSERT: the ids share milliseconds, so their low bits
  // (worker and sequence) vary, as they do in production.
  const customers = Array.from({ length: ROWS }, (_, i) => `customer ${i + 1}`);
  const inserted = await client.query(
    `INSERT INTO ${table} (customer)
       SELECT unnest($1::text[])
     RETURNING id, id::text AS id_text`,
    [customers]);
  console.log(`inserted ${inserted.rowCount} rows`);
  check(inserted.rowCount === ROWS, `${ROWS} rows inserted`);

  // node-postgres hands a type it does not know (snowid) over as the
  // server's text form: a string, every digit of it.
  const returned = inserted.rows.map((r) => r.id);
  check(returned.every((id, i) => typeof id === 'string' && id === inserted.rows[i].id_text),
    'RETURNING id gives strings equal to id::text');
  check(returned.every((id) => BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER)),
    'every id is above Number.MAX_SAFE_INTEGER (2^53 - 1)');

  const { rows } = await client.query(`
    SELECT id,
           id::text                              AS id_text,
           json_build_object('id', id)::text     AS object_json,
           to_json(id)::text                     AS scalar_json,
           json_build_object('id', id::bigint)::text AS bigint_json
      FROM ${table}
     ORDER BY id`);
  console.log(`read back ${rows.length} rows`);

  // As text.
  const textKept = rows.filter((r) => r.id === r.id_text).length;
  console.log(`text: ${textKept} of ${rows.length} ids keep every digit`);
  check(textKept === rows.length && rows.length === ROWS, 'ids read as text equal id::text');
  const want = new Set(returned);
  check(rows.every((r) => want.has(r.id_text)), 'ids read back are the ids inserted');

  // As JSON: snowid becomes a JSON string, so JSON.parse keeps it.
  let jsonKept = 0;
  for (const r of rows) {
    const obj = JSON.parse(r.object_json);
    const scalar = JSON.parse(r.scalar_json);
    if (typeof obj.id === 'string' && obj.id === r.id_text &&
        typeof scalar === 'string' && scalar === r.id_text) jsonKept++;
  }
  console.log(`json: ${jsonKept} of ${rows.length} ids keep every digit`);
  check(jsonKept === rows.length, 'JSON.parse of json_build_object / to_json keeps every id');

  // The same through node-postgres' own json parsing (a json column).
  const agg = await client.query(
    `SELECT json_agg(json_build_object('id', id) ORDER BY id) AS doc FROM ${table}`);
  const doc = agg.rows[0].doc;
  check(Array.isArray(doc) && doc.length === rows.length &&
        doc.every((o, i) => o.id === rows[i].id_text),
    'a json column parsed by node-postgres keeps every id');

  // A bigint in JSON is a bare number; JSON.parse turns it into a double.
  let rounded = 0;
  let example = null;
  for (const r of rows) {
    const n = JSON.parse(r.bigint_json).id;
    if (typeof n !== 'number') continue;
    // String(n) is what the application would show or send back.
    if (String(n) !== r.id_text) {
      rounded++;
      if (!example) example = `${r.id_text} -> ${String(n)}`;
    }
  }
  console.log(`bigint as a JSON number: ${rounded} of ${rows.length} ids lose digits in JSON.parse` +
    (example ? ` (e.g. ${example})` : ''));
  check(rounded > 0,
    'a bare JSON number rounds ids (which is why snowid gives JSON strings)');

  // And back: the string is a valid parameter, text or bigint.
  let found = 0;
  for (const r of rows) {
    const res = await client.query(
      `SELECT id::text AS id_text FROM ${table} WHERE id = $1`, [r.id_text]);
    if (res.rowCount === 1 && res.rows[0].id_text === r.id_text) found++;
  }
  console.log(`lookup by string id: ${found} of ${rows.length} found`);
  check(found === rows.length, 'every id finds its row when passed back as a string');

  if (process.env.SNOWID_EXAMPLE_KEEP !== '1') {
    await client.query(`DROP TABLE ${table}`);
  }
}

main().then(
  () => {
    if (failures > 0) {
      console.log(`FAILED: ${failures} check(s) did not hold`);
      process.exit(1);
    }
    console.log('all ids kept every digit');
    process.exit(0);
  },
  (err) => {
    console.error(`error: ${err.message}${err.code ? ` (SQLSTATE ${err.code})` : ''}`);
    process.exit(2);
  });
