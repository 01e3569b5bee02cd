# A promoted physical standby of a local-mode node refuses until an
# operator confirms that the old primary is gone (docs/design.md,
# section 4, invariants I12 and I14).
#
# The primary generates ids; a streaming standby made from its base backup
# (so it preloads snowid with the primary's settings, node name included)
# can decode them but not generate.  The primary then dies (immediate
# stop, so it releases nothing) and the standby is promoted: its timeline
# changed, so it refuses (state unfenced_copy, 55000) until a superuser
# calls snowid_confirm_takeover(); a plain role cannot.  After the
# confirmation the local coordinator is fenced and every new id is above
# every id the old primary issued, and the new lease's floor is at or
# above the old primary's last high-water mark.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SnowidTest;

my $primary = snowid_node(
	'primary',
	allows_streaming => 1,
	# ERROR and WARNING lines in the server log, for diagnosis
	conf => "log_min_messages = warning\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($primary, 'active'), 'primary holds a lease');
my $old_worker =
  $primary->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');

$primary->safe_psql(
	'postgres', q{
CREATE TABLE t (id snowid PRIMARY KEY DEFAULT snowid_nextval(), phase text NOT NULL);
INSERT INTO t (phase) SELECT 'before backup' FROM generate_series(1, 1000);
});

$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres',
	q{INSERT INTO t (phase) SELECT 'streamed' FROM generate_series(1, 1000)});
$primary->wait_for_catchup($standby);

# ---- on the standby: decoding works, generation does not ----
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby is in recovery');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM t'),
	'2000', 'standby has the ids made before and after the backup');
my $probe = $primary->safe_psql('postgres',
	q{SELECT max(id) FROM t WHERE phase = 'streamed'});
is( $standby->safe_psql(
		'postgres',
		"SELECT snowid_timestamp('$probe') || ' ' || snowid_worker('$probe') || ' ' || snowid_sequence('$probe')"
	),
	$primary->safe_psql(
		'postgres',
		"SELECT snowid_timestamp('$probe') || ' ' || snowid_worker('$probe') || ' ' || snowid_sequence('$probe')"
	),
	'standby decodes a replicated id as the primary does');
is( $standby->safe_psql(
		'postgres', "SELECT snowid_worker('$probe')"),
	$old_worker,
	'replicated id carries the primary\'s worker id');

for my $call ('SELECT snowid_nextval()', 'SELECT * FROM snowid_generate(3)')
{
	my ($state, $message, $stderr) = psql_error($standby, 'postgres', $call);
	is($state, '25006', "standby: $call fails with SQLSTATE 25006")
	  or diag $stderr;
	is($message, 'cannot generate snowids during recovery',
		"standby: $call says why");
}
is($standby->safe_psql('postgres', 'SELECT state FROM snowid_status()'),
	'no_lease_yet', 'standby: no lease (no keeper during recovery)');
is( $standby->safe_psql(
		'postgres', 'SELECT keeper_pid IS NULL FROM snowid_status()'),
	't', 'standby: no keeper runs during recovery');

# ---- the primary's last ids and high-water mark, then it dies ----
$primary->safe_psql('postgres',
	q{INSERT INTO t (phase) SELECT 'last replicated' FROM generate_series(1, 1000)});
$primary->wait_for_catchup($standby);
# Ids handed to a client and stored nowhere: the new primary must stay
# above them too.
my $last_issued = $primary->safe_psql('postgres',
	'SELECT max(x) FROM snowid_generate(5000) x');
my ($old_hw, $old_hw_epoch, $old_last_used) = split /\|/,
  $primary->safe_psql('postgres',
	'SELECT high_water, extract(epoch FROM high_water), last_used FROM snowid_status()');
ok($old_hw ne '', "primary's high-water mark is $old_hw");
note "old primary: worker $old_worker, last issued id $last_issued, "
  . "last used $old_last_used, high-water $old_hw";
$primary->stop('immediate');

# ---- promotion: the copy refuses ----
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'standby promoted');
ok(wait_for_state($standby, 'unfenced_copy', 30),
	'promoted standby: state unfenced_copy');

# The lease row as the promoted node inherited it: what the old primary
# had confirmed durable (and streamed) before it died.
my $replicated_hw_ms = $standby->safe_psql('postgres',
	"SELECT high_water_ms FROM snowid_coordinator.leases WHERE worker_id = $old_worker"
);
ok($replicated_hw_ms ne '',
	"replicated lease row of worker $old_worker has high-water $replicated_hw_ms ms");
cmp_ok($replicated_hw_ms, '<=', int($old_hw_epoch * 1000 + 0.5),
	'replicated high-water mark is not above the one the primary used');

for my $call ('SELECT snowid_nextval()', 'SELECT * FROM snowid_generate(3)')
{
	my ($state, $message, $stderr) = psql_error($standby, 'postgres', $call);
	is($state, '55000', "promoted standby: $call fails with SQLSTATE 55000")
	  or diag $stderr;
	like(
		$message,
		qr/refuses to generate on a copy of another server/,
		"promoted standby: $call says the node is a copy");
	like($stderr, qr/HINT:.*SELECT snowid_confirm_takeover\(\)/,
		"promoted standby: $call hints at snowid_confirm_takeover()");
}
like(
	$standby->safe_psql('postgres', 'SELECT detail FROM snowid_status()'),
	qr/system identifier, timeline or incarnation changed/,
	'promoted standby: snowid_status() says why');

# A plain role can neither confirm nor reach the coordinator's function.
$standby->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
{
	my ($state, $message, $stderr) = psql_error($standby, 'postgres',
		'SELECT snowid_confirm_takeover()', [ '-U', 'plain' ]);
	is($state, '42501', 'plain role cannot call snowid_confirm_takeover()')
	  or diag $stderr;
	like($message, qr/permission denied for function snowid_confirm_takeover/,
		'plain role: permission denied');
	($state, $message, $stderr) = psql_error($standby, 'postgres',
		'SELECT snowid_coordinator.confirm_identity_v1()', [ '-U', 'plain' ]);
	is($state, '42501',
		'plain role cannot call snowid_coordinator.confirm_identity_v1()')
	  or diag $stderr;
}
# A restart forgets nothing: the coordinator still records the old
# identity, so the new keeper finds the node unfenced again.
$standby->restart;
ok(wait_for_state($standby, 'unfenced_copy', 30),
	'after a restart: still unfenced_copy');
{
	my ($state, $message) =
	  psql_error($standby, 'postgres', 'SELECT snowid_nextval()');
	is($state, '55000', 'after a restart: snowid_nextval() still refused');
}
sleep 2;
is($standby->safe_psql('postgres', 'SELECT state FROM snowid_status()'),
	'unfenced_copy', 'still unfenced_copy: nothing confirmed it');
is( $standby->safe_psql(
		'postgres',
		q{SELECT count(*) FROM snowid_coordinator.events WHERE event = 'fence'}),
	'0', 'no fence recorded yet');

# ---- a superuser confirms the takeover ----
my $confirmed_at = $standby->safe_psql('postgres', 'SELECT clock_timestamp()');
$standby->safe_psql('postgres', 'SELECT snowid_confirm_takeover()');
ok(wait_for_state($standby, 'active', 40),
	'after snowid_confirm_takeover(): state active');
is( $standby->safe_psql(
		'postgres',
		q{SELECT count(*) FROM snowid_coordinator.events WHERE event = 'fence'}),
	'1', 'the confirmation fenced the coordinator');

my ($new_worker, $floor, $floor_ok, $floor_ok_replicated) = split /\|/,
  $standby->safe_psql(
	'postgres', qq{
SELECT worker_id, floor, floor >= '$old_hw'::timestamptz,
	   floor >= to_timestamp($replicated_hw_ms / 1000.0)
FROM snowid_status()});
note "new lease: worker $new_worker, floor $floor";
is($floor_ok, 't',
	"new lease's floor ($floor) is at or above the old primary's high-water mark ($old_hw)"
);
is($floor_ok_replicated, 't',
	"new lease's floor is at or above the replicated high-water mark");

# The fence rules: no grant for a lease plus the safety period, and every
# floor at least the fence time plus lease, margin and allowed clock offset.
my ($fence_floor_ok, $grant_delay_ok, $grant_delay) = split /\|/,
  $standby->safe_psql(
	'postgres', qq{
SELECT st.floor >= '$confirmed_at'::timestamptz
		 + make_interval(secs => (s.lease_ms + s.margin_ms + s.max_clock_offset_ms) / 1000.0),
	   g.at - f.at >= make_interval(secs => (s.lease_ms + s.safety_ms) / 1000.0),
	   g.at - f.at
FROM snowid_status() st, snowid_coordinator.settings s,
	 (SELECT max(at) AS at FROM snowid_coordinator.events WHERE event = 'fence') f,
	 (SELECT max(at) AS at FROM snowid_coordinator.events WHERE event = 'grant') g});
is($fence_floor_ok, 't',
	'floor is at least the confirmation time plus lease, margin and clock offset');
is($grant_delay_ok, 't',
	"no grant until a lease plus the safety period after the fence ($grant_delay)");

$standby->safe_psql('postgres',
	q{INSERT INTO t (phase) SELECT 'after takeover' FROM generate_series(1, 1000)});
my @new = split /\|/, $standby->safe_psql(
	'postgres', qq{
SELECT count(*),
	   min(id) > (SELECT max(id) FROM t WHERE phase <> 'after takeover'),
	   min(id) > '$last_issued'::snowid,
	   snowid_timestamp(min(id)) > '$old_hw'::timestamptz,
	   count(DISTINCT snowid_worker(id))
FROM t WHERE phase = 'after takeover'});
is($new[0], '1000', '1000 ids after the takeover');
is($new[1], 't',
	'every new id is above every id the old primary stored (replicated table)');
is($new[2], 't',
	'every new id is above the last id the old primary handed out');
is($new[3], 't',
	'new ids carry timestamps above the old primary\'s high-water mark');
note "worker ids: old $old_worker, new $new_worker";
is($standby->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM t'),
	't', 'no duplicate id in the table');

{
	my ($state, $message) = psql_error($standby, 'postgres',
		'SELECT snowid_confirm_takeover()');
	is($state, '55000', 'a second confirmation is refused (55000)');
	like($message, qr/no takeover to confirm/, 'nothing left to confirm');
}

# The confirmation is durable: after a restart the node takes a lease
# again without asking, and goes on above its own earlier ids.
$standby->restart;
ok(wait_for_state($standby, 'active', 30),
	'after a restart: active without a new confirmation');
$standby->safe_psql('postgres',
	q{INSERT INTO t (phase) SELECT 'after restart' FROM generate_series(1, 1000)});
is( $standby->safe_psql(
		'postgres', q{
SELECT (SELECT min(id) FROM t WHERE phase = 'after restart') >
	   (SELECT max(id) FROM t WHERE phase <> 'after restart')}),
	't',
	'after a restart: new ids above every earlier one');
is($standby->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM t'),
	't', 'no duplicate id in the table at the end');

$standby->stop;
done_testing();
