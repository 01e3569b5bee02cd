# Adopting snowid on existing tables (issue 13): snowid_convert_column()
# under concurrent inserts, its lock order, and pg_dump / pg_restore of the
# converted tables.  (test/sql/convert.sql has the metadata and refusals.)
#
# 1. Two tables with a referencing table each: customers (bigserial) and
#    orders.customer_id, converted keeping bigint; accounts (GENERATED
#    ALWAYS AS IDENTITY) and entries.account_id, converted to type snowid
#    (as_snowid, which rewrites both).  For each pair two psql sessions
#    insert through the defaults before, during and after the conversion:
#    one a parent row and a child row in one statement, one child rows
#    alone.  The conversion holds its locks until the test has seen an
#    insert waiting for them.  Every statement either succeeds or fails
#    with an error, no row is lost or doubled, and each session's ids are
#    the sequence's until the conversion and snowids after it.
#
# 2. The lock order of as_snowid.  A transaction that holds a referencing
#    table (an insert without a parent) and then inserts a row referencing
#    the table while the conversion waits for its locks: both finish.  A
#    conversion that waited for the referencing table while holding the
#    table would deadlock with it.
#
# 3. pg_dump -Fc / pg_restore of the database into a new one: the same
#    rows, types, defaults and foreign keys, no sequence for a converted
#    column, and new rows there take snowids above every old id.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

use SnowidTest;
use SnowidTest::Node qw(wait_seconds);

my $node = snowid_node('convert', conf => "log_min_messages = warning\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'node holds a lease');
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql(
	'app', q{
CREATE EXTENSION snowid;
CREATE TABLE customers (id bigserial PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (
	id			bigserial PRIMARY KEY,
	customer_id bigint NOT NULL REFERENCES customers,
	note		text);
CREATE TABLE accounts (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL);
CREATE TABLE entries (
	id			bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id	bigint REFERENCES accounts,
	note		text);
CREATE INDEX entries_account ON entries (account_id);
INSERT INTO customers (name) SELECT 'c' || g FROM generate_series(1, 2000) g;
INSERT INTO orders (customer_id, note) SELECT 1 + g % 2000, 'old' FROM generate_series(1, 5000) g;
INSERT INTO accounts (name) SELECT 'a' || g FROM generate_series(1, 2000) g;
INSERT INTO entries (account_id, note) SELECT 1 + g % 2000, 'old' FROM generate_series(1, 5000) g;
});

# ---- 1. conversions under concurrent inserts ----

# A psql script of $n statements, each followed by a short pause, and its
# session started in the background.  Each statement that succeeds prints
# "ok|<id>".
my $statements = 500;
my @sessions;

sub start_inserts
{
	my ($name, $sql) = @_;
	my $file = $node->basedir . "/$name.sql";
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh "$sql\nSELECT pg_sleep(0.015) \\g /dev/null\n" for 1 .. $statements;
	close $fh;
	my %s = (name => $name, out => '', err => '');
	$s{h} = IPC::Run::start(
		[ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=0', '-d', $node->connstr('app'), '-f', $file ],
		'>', \$s{out}, '2>', \$s{err},
		IPC::Run::timeout(wait_seconds(300)));
	push @sessions, \%s;
	return \%s;
}

my %pair = (
	customers => start_inserts(
		'customers_pair', q{WITH p AS (INSERT INTO customers (name) VALUES ('new') RETURNING id)
INSERT INTO orders (customer_id, note) SELECT id, 'pair' FROM p RETURNING 'ok', customer_id;}),
	accounts => start_inserts(
		'accounts_pair', q{WITH p AS (INSERT INTO accounts (name) VALUES ('new') RETURNING id)
INSERT INTO entries (account_id, note) SELECT id, 'pair' FROM p RETURNING 'ok', account_id;}));
my %alone = (
	customers => start_inserts(
		'orders_alone',
		q{INSERT INTO orders (customer_id, note) VALUES (7, 'alone') RETURNING 'ok', id;}),
	accounts => start_inserts(
		'entries_alone',
		q{INSERT INTO entries (account_id, note) VALUES (7, 'alone') RETURNING 'ok', id;}));

ok( SnowidTest::Node::poll_query(
		$node, 'app',
		q{SELECT (SELECT count(*) FROM customers) > 2020 AND (SELECT count(*) FROM accounts) > 2020}
	),
	'the sessions insert before the conversions');

my %bound;
for my $conv ([ 'customers', 'orders', 'false' ], [ 'accounts', 'entries', 'true' ])
{
	my ($tbl, $child, $as_snowid) = @$conv;
	my $conv_session = $node->background_psql('app');
	$bound{$tbl} = $conv_session->query_safe(
		qq{BEGIN;
SELECT snowid_convert_column('$tbl', 'id', as_snowid => $as_snowid);
SELECT snowid_from_time(now())::bigint;});
	$bound{$tbl} =~ s/\s+//g;
	# The conversion is done but not committed: inserts wait for it.
	ok( SnowidTest::Node::poll_query(
			$node, 'app',
			qq{SELECT count(*) > 0 FROM pg_locks
				WHERE NOT granted AND relation IN ('$tbl'::regclass, '$child'::regclass)}),
		"inserts into $tbl or $child wait while the conversion ($tbl, as_snowid $as_snowid) runs");
	$conv_session->query_safe('COMMIT');
	$conv_session->quit;
}

for my $s (@sessions)
{
	eval { $s->{h}->finish; 1 } or do { diag("session $s->{name}: $@"); $s->{h}->kill_kill; };
}

# Every statement of a session either printed its row or failed with an
# error; returns the ids it printed, in order.
sub accounted
{
	my ($s) = @_;
	my @ids = $s->{out} =~ /^ok\|(\d+)$/mg;
	my $errors = () = $s->{err} =~ /ERROR:/g;
	is(scalar(@ids) + $errors, $statements,
		"session $s->{name}: every statement succeeded or failed with an error ("
		  . scalar(@ids) . " rows, $errors errors)");
	diag("session $s->{name}: $s->{err}") if $errors;
	return @ids;
}

for my $tbl ('customers', 'accounts')
{
	my $child = $tbl eq 'customers' ? 'orders' : 'entries';
	my $fk = $tbl eq 'customers' ? 'customer_id' : 'account_id';
	my @pair_ids = accounted($pair{$tbl});
	my @alone_ids = accounted($alone{$tbl});

	# The pair session's parent ids: the sequence's, then snowids.
	my $bound = $bound{$tbl};
	my $old = grep { $_ < $bound } @pair_ids;
	my $new = grep { $_ >= $bound } @pair_ids;
	ok($old > 0 && $new > 0, "$tbl: rows before ($old) and after ($new) the conversion");
	my $seen_new = 0;
	my $interleaved = 0;
	for my $id (@pair_ids)
	{
		$seen_new = 1 if $id >= $bound;
		$interleaved++ if $seen_new && $id < $bound;
	}
	is($interleaved, 0, "$tbl: after the first snowid, no id comes from the sequence");

	# No row lost or doubled.
	my $file = $node->basedir . "/$tbl.ids";
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh "$_\n" for @pair_ids;
	close $fh;
	is( $node->safe_psql(
			'app', qq{
CREATE TEMP TABLE made (id bigint);
\\copy made FROM '$file'
SELECT (SELECT count(*) FROM made),
	   (SELECT count(DISTINCT id) FROM made),
	   (SELECT count(*) FROM made WHERE id::bigint IN (SELECT id::bigint FROM $tbl WHERE name = 'new')),
	   (SELECT count(*) FROM made WHERE id::bigint IN (SELECT ${fk}::bigint FROM $child WHERE note = 'pair')),
	   (SELECT count(*) FROM $tbl WHERE name = 'new'),
	   (SELECT count(*) FROM $child WHERE note = 'pair'),
	   (SELECT count(*) FROM $child WHERE note = 'alone'),
	   (SELECT count(*) FROM $tbl), (SELECT count(*) FROM $child)}),
		join('|',
			(scalar(@pair_ids)) x 6, scalar(@alone_ids),
			2000 + @pair_ids, 5000 + @pair_ids + @alone_ids),
		"$tbl and $child: every row made is there once, and only those");
	# New ids made there are snowids of this node.
	is( $node->safe_psql(
			'app', qq{
WITH i AS (INSERT INTO $tbl (name) VALUES ('later') RETURNING id)
SELECT snowid_worker(id::snowid) = (SELECT worker_id FROM snowid_status())
	   AND id::bigint >= snowid_from_time(now() - interval '1 minute')::bigint
  FROM i}),
		't', "$tbl: a new row takes a snowid of this node");
}
is( $node->safe_psql(
		'app', q{
SELECT string_agg(format('%s.%s %s %s', attrelid::regclass, attname,
		format_type(atttypid, atttypmod),
		coalesce(pg_get_serial_sequence(attrelid::regclass::text, attname), 'no-sequence')), ', '
		ORDER BY attrelid::regclass::text, attname)
  FROM pg_attribute
 WHERE (attrelid, attname) IN (('customers'::regclass, 'id'), ('orders'::regclass, 'customer_id'),
							   ('accounts'::regclass, 'id'), ('entries'::regclass, 'account_id'))}),
	'accounts.id snowid no-sequence, customers.id bigint no-sequence, '
	  . 'entries.account_id snowid no-sequence, orders.customer_id bigint no-sequence',
	'types after the conversions; the sequences are gone');
is( $node->safe_psql(
		'app', q{
SELECT string_agg(conname || ' ' || convalidated, ', ' ORDER BY conname)
  FROM pg_constraint WHERE contype = 'f'}),
	'entries_account_id_fkey true, orders_customer_id_fkey true',
	'the foreign keys are kept, validated');

# ---- 2. as_snowid's lock order ----
$node->safe_psql(
	'app', q{
CREATE TABLE teams (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text);
CREATE TABLE members (id bigserial PRIMARY KEY, team_id bigint REFERENCES teams, note text);
INSERT INTO teams (name) SELECT 't' || g FROM generate_series(1, 100) g;
});
my $holder = $node->background_psql('app');
# A row without a team locks members only.
$holder->query_safe(q{BEGIN; INSERT INTO members (team_id, note) VALUES (NULL, 'holder')});
my $converter = $node->background_psql('app', on_error_stop => 0);
$converter->query_until(qr/converting/,
	"\\echo converting\nSELECT snowid_convert_column('teams', 'id', as_snowid => true);\n");
ok( SnowidTest::Node::poll_query(
		$node, 'app',
		q{SELECT count(*) > 0 FROM pg_stat_activity
			WHERE query LIKE 'SELECT snowid_convert_column(''teams''%' AND state = 'active'}),
	'the conversion of teams runs while a transaction holds members');
sleep 1;
# The holder's foreign key check locks teams: it must not deadlock.
my $holder_ok = eval {
	$holder->query_safe(q{INSERT INTO members (team_id, note) VALUES (1, 'holder')});
	$holder->query_safe('COMMIT');
	1;
};
ok($holder_ok, 'the holder inserts a row referencing teams and commits')
  or diag($@);
$holder->quit;
my $after = $converter->query(q{SELECT format_type(atttypid, NULL) FROM pg_attribute
	WHERE attrelid = 'members'::regclass AND attname = 'team_id'});
is($converter->{stderr}, '', 'the conversion finished without an error');
$converter->quit;
is( $node->safe_psql(
		'app', q{
SELECT format_type(a.atttypid, NULL), (SELECT count(*) FROM members WHERE note = 'holder')
  FROM pg_attribute a WHERE attrelid = 'members'::regclass AND attname = 'team_id'}),
	'snowid|2', 'members.team_id is a snowid and the holder\'s rows are there');

# ---- 3. pg_dump / pg_restore ----
my $dump = $node->basedir . '/app.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('app'), '-f', $dump ],
	'pg_dump -Fc of the converted database');
my $script = $node->basedir . '/app.dump.sql';
$node->command_ok([ 'pg_restore', '-f', $script, $dump ], 'pg_restore -f lists the dump');
my $script_text = slurp_file($script);
like($script_text, qr/^    id bigint DEFAULT public\.snowid_nextval\(\) NOT NULL,$/m,
	'the dump creates customers.id with DEFAULT snowid_nextval()');
like($script_text, qr/^    id public\.snowid DEFAULT public\.snowid_nextval\(\) NOT NULL,$/m,
	'the dump creates accounts.id as a snowid with DEFAULT snowid_nextval()');
unlike($script_text, qr/\b(customers|accounts|teams)_id_seq\b/,
	'the dump has no sequence for a converted column');
$node->safe_psql('postgres', 'CREATE DATABASE app_restored');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('app_restored'), $dump ],
	'pg_restore into a new database');

my $catalog = q{
SELECT string_agg(format('%s.%s %s %s default %s seq %s', c.relname, a.attname,
		format_type(a.atttypid, a.atttypmod), a.attidentity,
		coalesce(pg_get_expr(d.adbin, d.adrelid), '-'),
		coalesce(pg_get_serial_sequence(c.oid::regclass::text, a.attname), '-')), E'\n'
		ORDER BY c.relname, a.attnum)
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
UNION ALL
SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class
 WHERE relnamespace = 'public'::regnamespace AND relkind = 'S'
UNION ALL
SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated, E'\n'
		ORDER BY conname)
  FROM pg_constraint WHERE connamespace = 'public'::regnamespace};
my $src_catalog = $node->safe_psql('app', $catalog);
is($node->safe_psql('app_restored', $catalog),
	$src_catalog, 'the restored tables have the same types, defaults, sequences and constraints');
like($src_catalog, qr/^accounts\.id snowid  default snowid_nextval\(\) seq -$/m,
	'accounts.id: a snowid with DEFAULT snowid_nextval(), no identity, no sequence');
like($src_catalog, qr/^customers\.id bigint  default snowid_nextval\(\) seq -$/m,
	'customers.id: a bigint with DEFAULT snowid_nextval(), no sequence');
unlike($src_catalog, qr/\b(customers|accounts|teams)_id_seq\b/,
	'the converted columns\' sequences are not in the dump');
for my $t ('customers', 'orders', 'accounts', 'entries', 'teams', 'members')
{
	my $rows = "SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)), count(*) FROM $t t";
	is($node->safe_psql('app_restored', $rows),
		$node->safe_psql('app', $rows), "$t: the restored rows are the same");
}
is( $node->safe_psql(
		'app_restored', q{
INSERT INTO accounts (name) VALUES ('restored');
INSERT INTO customers (name) VALUES ('restored');
SELECT (SELECT bool_and(id = (SELECT max(id) FROM accounts)) FROM accounts WHERE name = 'restored')
   AND (SELECT bool_and(id = (SELECT max(id) FROM customers)) FROM customers WHERE name = 'restored')
   AND (SELECT bool_and(id::bigint >= snowid_from_time(now() - interval '1 minute')::bigint)
		  FROM customers WHERE name = 'restored')}),
	't', 'new rows in the restored database take snowids above every old id');
my ($state) = psql_error($node, 'app_restored',
	q{INSERT INTO entries (account_id, note) VALUES (123456789012, 'dangling')});
is($state, '23503', 'the restored foreign keys are in force');

$node->stop;
done_testing();
