# pg_upgrade from an older major (Debian's PostgreSQL 15 by default,
# SNOWID_UPGRADE_FROM) to the major under test, of the three kinds of
# server snowid has:
#
#   L  a local-mode node (its coordinator in its own database),
#   C  a remote coordinator (snowid_coordinator only), and
#   R  a remote-mode node leasing from C,
#
# with snowid columns, a primary key, an expression index and a hash index,
# and the coordinators' lease state.  After the upgrade:
#   * every id is intact (same count and checksum; amcheck finds the
#     indexes sound and they still find the rows);
#   * C keeps its settings and leases as they were, and fences itself at
#     the first request (its system identifier changed: a new cluster);
#   * L refuses with unfenced_copy (its system identifier changed, as after
#     any copy) until snowid_confirm_takeover(), then generates above every
#     old id;
#   * R takes a lease from the fenced C once the fence allows it and
#     generates above every old id, with no confirmation needed.
# Skips unless the major under test is newer than the old one and the old
# one holds this tree's snowid (make test with PG_MAJORS="15 18" installs it
# into 15 first).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use SnowidTest;
use SnowidTest::Upgrade;

my $new_version = PostgreSQL::Test::Cluster->new('probe')->pg_version;
my $problem = old_install_problem($new_version);
plan skip_all => "pg_upgrade test: $problem" if $problem;

# ---------------------------------------------------------------------
# The old servers
# ---------------------------------------------------------------------
my $c_old = old_coordinator('c_old');

sub conninfo_of
{
	my ($c) = @_;
	return 'host=' . $c->host . ' port=' . $c->port
	  . ' dbname=postgres user=snowid_node';
}

my $l_old = old_cluster('l_old', snowid_node_conf('l'));
my $r_old = old_cluster('r_old',
	snowid_node_conf('r', "snowid.coordinator = '" . conninfo_of($c_old) . "'\n"));

my $data_sql = q{
CREATE EXTENSION amcheck;
CREATE TABLE items (
	id snowid PRIMARY KEY DEFAULT snowid_nextval(),
	v int NOT NULL,
	ref snowid
);
CREATE INDEX items_ms ON items (snowid_timestamp(id));
CREATE INDEX items_ref ON items USING hash (ref);
INSERT INTO items (v) SELECT g FROM generate_series(1, 20000) g;
INSERT INTO items (id, v) SELECT x, -1 FROM snowid_generate(5000) x;
UPDATE items SET ref = id WHERE v % 7 = 0;
};
my $digest_sql = q{
SELECT count(*) || ' ' || max(id) || ' ' || md5(string_agg(id::text || ':' || v || ':' || coalesce(ref::text, ''), ',' ORDER BY id))
FROM items};

my %digest;
my %max;
for my $node ($l_old, $r_old)
{
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	ok(wait_for_state($node, 'active'), $node->name . ' holds a lease');
	$node->safe_psql('postgres', $data_sql);
	$digest{ $node->name } = $node->safe_psql('postgres', $digest_sql);
	($max{ $node->name }) = $digest{ $node->name } =~ /^\d+ (\d+) /;
	note $node->name . ': ' . $digest{ $node->name };
	note $node->name . ': pg_attver removed from ' . strip_pg_attver($node)
	  . ' columns (see SnowidTest::Upgrade)';
	$node->stop;
}

my $leases_sql = q{
SELECT string_agg(concat_ws('|', worker_id, owner, node_name, high_water_ms,
		expires_at, acquired_at, renewed_at, released_at), E'\n' ORDER BY worker_id)
FROM snowid_coordinator.leases};
my $settings_sql = q{
SELECT concat_ws('|', timestamp_bits, worker_bits, region_bits, sequence_bits,
	epoch_ms, lease_ms, safety_ms, margin_ms, local_mode, single_server)
FROM snowid_coordinator.settings};
my $c_leases = $c_old->safe_psql('postgres', $leases_sql);
my $c_settings = $c_old->safe_psql('postgres', $settings_sql);
like($c_leases, qr/\|r\|/, 'the coordinator holds the lease row of node r');
note 'c_old: pg_attver removed from ' . strip_pg_attver($c_old) . ' columns';
$c_old->stop;

# The local coordinator of L, read with snowid no longer preloaded, so
# that no keeper changes it meanwhile.
$l_old->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$l_old->start;
my $l_leases = $l_old->safe_psql('postgres', $leases_sql);
$l_old->stop;
$l_old->append_conf('postgresql.conf', "shared_preload_libraries = 'snowid'\n");

# ---------------------------------------------------------------------
# pg_upgrade
# ---------------------------------------------------------------------
# The new servers get their settings before the upgrade, as an operator
# would configure them: snowid preloaded, R pointing at the new C.
my $c_new = upgraded_cluster('c_new', $c_old);
my $l_new = upgraded_cluster('l_new', $l_old, snowid_node_conf('l'));
my $r_new = upgraded_cluster('r_new', $r_old,
	snowid_node_conf('r', "snowid.coordinator = '" . conninfo_of($c_new) . "'\n"));
my $upgraded_at = time;
run_pg_upgrade($c_old, $c_new) or BAIL_OUT('pg_upgrade failed for the coordinator');
run_pg_upgrade($l_old, $l_new) or BAIL_OUT('pg_upgrade failed for the local node');
run_pg_upgrade($r_old, $r_new) or BAIL_OUT('pg_upgrade failed for the remote node');

# ---------------------------------------------------------------------
# The coordinator keeps its state, and fences itself
# ---------------------------------------------------------------------
$c_new->start;
is($c_new->safe_psql('postgres', $settings_sql), $c_settings,
	'coordinator settings (layout, lease timings) are as before');
is($c_new->safe_psql('postgres', $leases_sql), $c_leases,
	'coordinator lease rows are as before');
is( $c_new->safe_psql('postgres',
		q{SELECT extversion FROM pg_extension WHERE extname = 'snowid_coordinator'}),
	'1.1', 'snowid_coordinator 1.1 on the new major');

# ---------------------------------------------------------------------
# The local-mode node
# ---------------------------------------------------------------------
$l_new->start;
is($l_new->safe_psql('postgres', $digest_sql), $digest{l_old},
	'local node: every id intact');
is($l_new->safe_psql('postgres', $leases_sql), $l_leases,
	'local node: its coordinator rows are as before');

sub indexes_sound
{
	my ($node) = @_;
	my $some = $node->safe_psql('postgres',
		'SELECT id FROM items WHERE ref IS NOT NULL ORDER BY id OFFSET 100 LIMIT 1');
	is( $node->safe_psql('postgres', q{
SELECT 'sound' FROM (SELECT bt_index_check('items_pkey', true),
	bt_index_check('items_ms', true)) s}),
		'sound', $node->name . ': amcheck finds the b-tree indexes sound');
	is( $node->safe_psql('postgres', qq{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT (SELECT count(*) FROM items WHERE id = '$some') || ' '
	|| (SELECT count(*) FROM items WHERE ref = '$some') || ' '
	|| ((SELECT count(*) FROM items WHERE snowid_timestamp(id) = snowid_timestamp('$some')) > 0)}),
		'1 1 true', $node->name . ': primary key, hash and expression indexes find the rows');
}
indexes_sound($l_new);

ok(wait_for_state($l_new, 'unfenced_copy'),
	'local node: unfenced_copy after the upgrade (a new system identifier)');
my ($state, $message) = psql_error($l_new, 'postgres', 'SELECT snowid_nextval()');
is($state, '55000', "local node refuses to generate: $message");
$l_new->safe_psql('postgres', 'SELECT snowid_confirm_takeover()');
ok(wait_for_state($l_new, 'active'),
	'local node: active after snowid_confirm_takeover()');
$l_new->safe_psql('postgres',
	'INSERT INTO items (v) SELECT g FROM generate_series(1, 1000) g');
my $l_next = $l_new->safe_psql('postgres',
	"SELECT count(*) || ' ' || bool_and(id > '$max{l_old}') FROM (SELECT id FROM items ORDER BY id DESC LIMIT 1000) s");
is($l_next, '1000 true', 'local node: new ids lie above every old one');
is($l_new->safe_psql('postgres', 'SELECT count(DISTINCT id) = count(*) FROM items'),
	't', 'local node: no id twice');

# ---------------------------------------------------------------------
# The remote-mode node
# ---------------------------------------------------------------------
$r_new->start;
is($r_new->safe_psql('postgres', $digest_sql), $digest{r_old},
	'remote node: every id intact');
indexes_sound($r_new);
ok(wait_for_state($r_new, 'active', 90),
	'remote node: active again, with no confirmation (its lease lives at the coordinator)');
my $fences = $c_new->safe_psql('postgres', q{
SELECT count(*) FROM snowid_coordinator.events WHERE event = 'fence'
	AND at > now() - make_interval(secs => } . (time - $upgraded_at + 5) . ')');
ok($fences >= 1, "the upgraded coordinator fenced itself ($fences fence event)");
my ($fence_floor, $granted_floor) = split /\|/, $c_new->safe_psql('postgres', q{
SELECT s.fence_floor_ms || '|' || l.high_water_ms
FROM snowid_coordinator.settings s, snowid_coordinator.leases l
WHERE l.node_name = 'r' AND l.owner IS NOT NULL});
ok($fence_floor > 0, "and raised its fence floor ($fence_floor)");
$r_new->safe_psql('postgres',
	'INSERT INTO items (v) SELECT g FROM generate_series(1, 1000) g');
is( $r_new->safe_psql('postgres',
		"SELECT count(*) || ' ' || bool_and(id > '$max{r_old}') FROM (SELECT id FROM items ORDER BY id DESC LIMIT 1000) s"),
	'1000 true', 'remote node: new ids lie above every old one');
is($r_new->safe_psql('postgres', 'SELECT count(DISTINCT id) = count(*) FROM items'),
	't', 'remote node: no id twice');

$r_new->stop;
$l_new->stop;
$c_new->stop;
done_testing();
