# The lease keeper under faults.
#
# (a) the keeper ends on an error (pg_cancel_backend) while a session
#     generates: the postmaster starts a new keeper, which resumes the
#     same lease (same worker id and token, one lease row, one grant) and
#     no id is issued twice;
# (b) the keeper is SIGKILLed: the postmaster restarts the whole server;
#     no id is issued twice and the old worker id is not granted again
#     while its lease could still be in use;
# (c) the lease row is taken by another token: the node stops using that
#     worker id within the lease length, counts a lease loss, never takes
#     the row back, and carries on with another worker id;
# (d) synchronous_commit = off for the keeper's database: the keeper still
#     works and every high-water mark it uses is durable (checked across an
#     immediate stop, with a WAL writer that would leave an asynchronous
#     commit unflushed for seconds); the lease functions force
#     synchronous_commit = on for their transaction.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use SnowidTest;

my $started_at = time;
my $lease_ms   = 6000;    # snowid.lease_time in SnowidTest.pm

# restart_after_crash for (b); an asynchronous commit may stay in WAL
# buffers for up to wal_writer_delay, which (d) relies on; autovacuum
# would flush WAL at random moments.
my $node = snowid_node(
	'keeper', conf => q{
restart_after_crash = on
wal_writer_delay = '10s'
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'node takes a lease');
create_id_tables($node);

sub status
{
	my ($columns) = @_;
	return split /\|/,
	  $node->safe_psql('postgres', "SELECT $columns FROM snowid_status()");
}

# ---------------------------------------------------------------------
# (a) the keeper exits on an error; the postmaster restarts it
# ---------------------------------------------------------------------
my ($worker, $keeper_pid) = status('worker_id, keeper_pid');
like($keeper_pid, qr/^\d+$/, "keeper runs as pid $keeper_pid");
my $held_sql = q{SELECT string_agg(worker_id::text, ',')
FROM snowid_coordinator.leases WHERE owner IS NOT NULL AND node_name = 'keeper'};
my $grants_sql = q{SELECT count(*) FROM snowid_coordinator.events
WHERE event = 'grant' AND node_name = 'keeper'};
is($node->safe_psql('postgres', $held_sql),
	$worker, "one lease row held for this node: worker id $worker");
is($node->safe_psql('postgres', $grants_sql), '1', 'one grant so far');
my $token = $node->safe_psql('postgres',
	"SELECT owner FROM snowid_coordinator.leases WHERE worker_id = $worker");

my $gen = start_generator($node, 'cancel');
ok(wait_for_ids($node, 'cancel', 500), 'generator runs');

# A cancel that lands while the keeper talks to the coordinator only
# fails that one call; try again until the keeper exits.
my $offset = log_offset($node);
my $restarted = 0;
for my $attempt (1 .. 3)
{
	is( $node->safe_psql('postgres',
			'SELECT pg_cancel_backend(keeper_pid) FROM snowid_status()'),
		't', "cancel sent to the keeper (attempt $attempt)");
	$restarted = poll_until($node,
		"SELECT keeper_pid <> $keeper_pid FROM snowid_status()", 't', 10);
	last if $restarted;
}
ok($restarted, 'a new keeper runs (keeper_pid changed)');
my $new_pid = $node->safe_psql('postgres',
	'SELECT keeper_pid FROM snowid_status()');
my $log = slurp_file($node->logfile, $offset);
like(
	$log,
	qr/background worker "snowid lease keeper" \(PID $keeper_pid\) exited with exit code 1/,
	'the old keeper exited with an error');
ok( $node->wait_for_log(
		qr/\[$new_pid\] LOG:  snowid lease keeper restarted; resuming the lease on worker id $worker/,
		$offset),
	'the new keeper resumes the lease');

# The new keeper renews with the same token (a renewal names the token),
# and the generator keeps going.
my $restart_time = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
ok( poll_until(
		$node, qq{
SELECT renewed_at > '$restart_time' AND owner = '$token'
FROM snowid_coordinator.leases WHERE worker_id = $worker}, 't', 15),
	'the new keeper renews the same lease with the same token');
ok(wait_for_ids($node, 'cancel', 500, $restart_time),
	'ids are generated after the keeper restart');
is(stop_generator($node, $gen), 0, 'generator ran to the end');

is(join('|', status('worker_id, state')),
	"$worker|active", "still worker id $worker, active");
is($node->safe_psql('postgres', $held_sql),
	$worker, 'still one lease row held for this node');
is($node->safe_psql('postgres', $grants_sql),
	'1', 'no second grant: the lease was resumed, not acquired again');
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(DISTINCT snowid_worker(id)::text, ',')
FROM snowid_gen_ids WHERE phase = 'cancel'}),
	$worker,
	'every id generated throughout carries the one worker id');
is( $node->safe_psql('postgres',
		'SELECT count(*) - count(DISTINCT id) FROM snowid_gen_ids'),
	'0', 'keeper restart: no id issued twice');
note('refused rounds during the keeper restart: '
	  . $node->safe_psql('postgres',
		  "SELECT count(*) FROM snowid_gen_errors WHERE phase = 'cancel'"));

# ---------------------------------------------------------------------
# (b) the keeper SIGKILLed: the postmaster restarts the server
# ---------------------------------------------------------------------
$gen = start_generator($node, 'keeper_kill');
ok(wait_for_ids($node, 'keeper_kill', 500), 'generator runs');
($worker, $keeper_pid) = status('worker_id, keeper_pid');
my $cool_ms = $node->safe_psql(
	'postgres', qq{
SELECT (extract(epoch FROM l.expires_at) * 1000)::bigint + s.safety_ms
FROM snowid_coordinator.leases l, snowid_coordinator.settings s
WHERE l.worker_id = $worker});
$offset = log_offset($node);
is(kill('KILL', $keeper_pid), 1, "keeper $keeper_pid SIGKILLed");
ok( $node->wait_for_log(
		qr/all server processes terminated; reinitializing/, $offset),
	'the postmaster restarts the server');
ok(wait_until_up($node), 'node accepts connections again');
isnt(stop_generator($node, $gen), 0, 'the generator lost its connection');
ok(wait_for_state($node, 'active'), 'node takes a lease again');
my ($new_worker, $acquired_ms) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT l.worker_id, (extract(epoch FROM l.acquired_at) * 1000)::bigint
FROM snowid_status() st
JOIN snowid_coordinator.leases l ON l.worker_id = st.worker_id});
note("keeper SIGKILL: worker id $worker before, $new_worker after");
ok($new_worker != $worker || $acquired_ms >= $cool_ms,
	"worker id $worker not granted again while its lease could still be in use"
);
generate_ids($node, 'after_keeper_kill', 2000);
check_ids($node, 'keeper SIGKILL', [ 'cancel', 'keeper_kill' ],
	['after_keeper_kill']);

# ---------------------------------------------------------------------
# (c) the lease row taken by another token
# ---------------------------------------------------------------------
$worker = $new_worker;
my $losses_before = $node->safe_psql('postgres',
	'SELECT lease_losses FROM snowid_stats');
$gen = start_generator($node, 'steal');
ok(wait_for_ids($node, 'steal', 500), 'generator runs');

my $thief = $node->safe_psql('postgres', 'SELECT gen_random_uuid()');
my $steal_ms = $node->safe_psql(
	'postgres', qq{
UPDATE snowid_coordinator.leases SET owner = '$thief'
WHERE worker_id = $worker
RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::bigint});
like($steal_ms, qr/^\d+$/, "lease row of worker id $worker given to $thief");

ok( poll_until(
		$node,
		"SELECT lease_losses > $losses_before FROM snowid_stats",
		't', $lease_ms / 1000 + 4),
	'the node counts a lease loss');
ok( poll_until(
		$node, qq{SELECT state = 'active' AND worker_id <> $worker
FROM snowid_status()}, 't', 20),
	'the node carries on with another worker id');
ok(wait_for_ids($node, 'steal', 200, $node->safe_psql('postgres', 'SELECT now()')),
	'the generator gets ids again');
is(stop_generator($node, $gen), 0, 'generator ran to the end');

my ($last_old_at, $last_old_ts, $first_refusal, $refusals, $new_ids) =
  split /\|/, $node->safe_psql(
	'postgres', qq{
SELECT (SELECT (extract(epoch FROM max(at)) * 1000)::bigint
		FROM snowid_gen_ids WHERE snowid_worker(id) = $worker),
	   (SELECT (extract(epoch FROM snowid_timestamp(max(id))) * 1000)::bigint
		FROM snowid_gen_ids WHERE snowid_worker(id) = $worker),
	   (SELECT (extract(epoch FROM min(at)) * 1000)::bigint
		FROM snowid_gen_errors
		WHERE phase = 'steal' AND message = 'snowid lease on worker id $worker was lost'),
	   (SELECT count(*) FROM snowid_gen_errors WHERE phase = 'steal'),
	   (SELECT count(*) FROM snowid_gen_ids
		WHERE phase = 'steal' AND snowid_worker(id) <> $worker)});
note("steal at $steal_ms; last id of worker $worker stored at $last_old_at "
	  . "(timestamp $last_old_ts); first refusal at "
	  . ($first_refusal // 'none') . "; $refusals refused rounds");
cmp_ok($last_old_ts - $steal_ms, '<', $lease_ms,
	"no id of worker id $worker stamped a lease length after the theft");
ok( ($first_refusal ne '' && $first_refusal - $steal_ms < $lease_ms)
	  || $new_ids > 0,
	'the node refused with "lease lost" within the lease length, or moved to another worker id'
);
cmp_ok($new_ids, '>', 0, 'ids after the theft carry another worker id');
is( $node->safe_psql(
		'postgres',
		"SELECT owner FROM snowid_coordinator.leases WHERE worker_id = $worker"),
	'00000000-0000-0000-0000-000000000000',
	'the node never took the row back: a valid lease found under another owner is taken from both (contested)');
cmp_ok(
	$node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM snowid_coordinator.events
WHERE event = 'contested' AND worker_id = $worker}),
	'>=', 1,
	'the coordinator recorded the contested renewal');
is( $node->safe_psql('postgres',
		'SELECT count(*) - count(DISTINCT id) FROM snowid_gen_ids'),
	'0', 'lease theft: no id issued twice');

# ---------------------------------------------------------------------
# (d) synchronous_commit = off for the keeper's database
# ---------------------------------------------------------------------
# The lease functions force a durable commit for their transaction (a
# local flush in local mode, the synchronous standby otherwise), whatever the
# session says.  This probe takes, renews and releases a worker id of its
# own, as the keeper would.
my $probe = $node->safe_psql(
	'postgres', q{
SET synchronous_commit = off;
BEGIN;
SELECT status AS acq_status, worker_id AS probe_worker
FROM snowid_coordinator.lease_acquire_v1(
	'00000000-0000-4000-8000-00000000d00d', 'durability-probe',
	41, 10, 0, 12, 1735689600000, NULL,
	(extract(epoch FROM clock_timestamp()) * 1000)::bigint) \gset
SHOW synchronous_commit;
COMMIT;
SHOW synchronous_commit;
BEGIN;
SELECT status FROM snowid_coordinator.lease_renew_v1(
	'00000000-0000-4000-8000-00000000d00d', :probe_worker,
	(extract(epoch FROM clock_timestamp()) * 1000)::bigint);
SHOW synchronous_commit;
COMMIT;
BEGIN;
SELECT status FROM snowid_coordinator.lease_release_v1(
	'00000000-0000-4000-8000-00000000d00d', :probe_worker,
	(extract(epoch FROM clock_timestamp()) * 1000)::bigint);
SHOW synchronous_commit;
COMMIT;
SELECT :'acq_status';
});
is( $probe,
	join("\n", 'local', 'off', 'renewed', 'local', 'released', 'local', 'granted'),
	'in local mode lease_acquire_v1, lease_renew_v1 and lease_release_v1 force a local flush (synchronous_commit = local) in a session that has it off'
);

$node->safe_psql('postgres',
	'ALTER DATABASE postgres SET synchronous_commit = off');
$node->restart;
is($node->safe_psql('postgres', 'SHOW synchronous_commit'),
	'off', 'sessions in database postgres now default to synchronous_commit = off');
ok(wait_for_state($node, 'active'), 'the keeper takes a lease');
my $renewals = $node->safe_psql('postgres',
	'SELECT lease_renewals FROM snowid_stats');
ok( poll_until(
		$node, "SELECT lease_renewals > $renewals FROM snowid_stats",
		't', $lease_ms / 1000 + 4),
	'the keeper renews its lease');
generate_ids($node, 'sync_off', 1000);
pass('ids are generated');

# The high-water mark the node uses (shown by snowid_status) must be
# durable: right after a renewal, stop without any flush and read the
# lease row back.  An asynchronous commit would still be in WAL buffers
# (wal_writer_delay is 10 s) and be lost.
$renewals = $node->safe_psql('postgres',
	'SELECT lease_renewals FROM snowid_stats');
ok( poll_until(
		$node, "SELECT lease_renewals > $renewals FROM snowid_stats",
		't', $lease_ms / 1000 + 4),
	'another renewal');
my ($hw_worker, $hw_ms) = status(
	'worker_id, (extract(epoch FROM high_water) * 1000)::bigint');
$node->stop('immediate');

set_preload($node, 0);
$node->start;
my $durable_ms = $node->safe_psql('postgres',
	"SELECT high_water_ms FROM snowid_coordinator.leases WHERE worker_id = $hw_worker"
);
note("high-water mark in use $hw_ms, durable $durable_ms");
cmp_ok($durable_ms, '>=', $hw_ms,
	'after an immediate stop the lease row holds at least the high-water mark the node used'
);
$node->stop;
set_preload($node, 1);

$node->start;
ok(wait_for_state($node, 'active'), 'after the immediate stop: lease again');
generate_ids($node, 'sync_off_after', 1000);
check_ids($node, 'synchronous_commit = off', [ 'sync_off' ],
	['sync_off_after']);
$node->safe_psql('postgres', 'ALTER DATABASE postgres RESET synchronous_commit');

$node->stop;
note(sprintf('011_keeper took %.1f s', time - $started_at));
done_testing();
