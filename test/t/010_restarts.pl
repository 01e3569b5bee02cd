# Ids stay unique under concurrency and across every kind of restart, and
# a clean shutdown hands the true last used timestamp to the next owner.
#
# (a) concurrent clients (pgbench, nextval and batch scripts) into a table
#     with a snowid primary key: every transaction succeeds, every id is
#     distinct and carries the node's worker id;
# (c) clean shutdown: the release event and the lease row record exactly
#     the timestamp of the last id issued, and the next lease starts there;
# (b) fast restart, immediate restart (at once, and after the old lease
#     cooled down) and a backend SIGKILL (crash restart), each while a
#     session generates: no id twice, a worker id whose lease was not
#     released is not granted again before it expired plus the safety
#     period, and where a worker id comes back every new id is above
#     every old one.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use IPC::Run;

use SnowidTest;

my $started_at = time;

# Cluster.pm turns restart_after_crash off; the crash restart needs it.
my $node = snowid_node('restarts', conf => 'restart_after_crash = on');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'node takes a lease');
create_id_tables($node);

my $worker = $node->safe_psql('postgres',
	'SELECT worker_id FROM snowid_status()');
like($worker, qr/^\d+$/, "node holds worker id $worker");

# ---------------------------------------------------------------------
# (a) concurrent clients
# ---------------------------------------------------------------------
$node->safe_psql(
	'postgres', q{
CREATE TABLE t (id snowid PRIMARY KEY DEFAULT snowid_nextval(),
				src text NOT NULL)});

my $dir = $node->basedir;
append_to_file("$dir/one.sql",   "INSERT INTO t (src) VALUES ('one');\n");
append_to_file("$dir/batch.sql",
	"INSERT INTO t (id, src) SELECT snowid_generate(20), 'batch';\n");

my ($bench_out, $bench_err) = ('', '');
my $bench_ok = IPC::Run::run(
	[
		'pgbench', '-n', '-c', '4', '-j', '2', '-t', '4000',
		'-f', "$dir/one.sql\@3", '-f', "$dir/batch.sql\@1",
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$bench_out, '2>', \$bench_err);
ok($bench_ok, 'pgbench, 4 clients x 4000 transactions: exit status 0')
  or diag("pgbench stdout:\n$bench_out\nstderr:\n$bench_err");
like($bench_out, qr/number of failed transactions: 0 /,
	'pgbench: no transaction failed');

like($bench_out, qr{number of transactions actually processed: 16000/16000},
	'pgbench: all 16000 transactions processed');

# (pgbench's per-script transaction counts can be one short, so the rows
# are checked against the total.)
my ($rows, $distinct, $from_one, $from_batch, $workers) = split /\|/,
  $node->safe_psql(
	'postgres', q{
SELECT count(*), count(DISTINCT id),
	   count(*) FILTER (WHERE src = 'one'),
	   count(*) FILTER (WHERE src = 'batch'),
	   string_agg(DISTINCT snowid_worker(id)::text, ',')
FROM t});
note("concurrent clients: $from_one single ids, $from_batch from batches");
is($distinct, $rows, "concurrent clients: all $rows ids distinct");
is($from_batch % 20, 0, 'batches stored twenty ids each');
is($from_one + $from_batch / 20, 16000,
	'one stored row per single-id transaction, twenty per batch');
is($workers, $worker, 'every id carries the node\'s worker id');

# From here on these ids count as issued before every restart below.
$node->safe_psql('postgres',
	q{INSERT INTO snowid_gen_ids (phase, id) SELECT 'pgbench', id FROM t});

# ---------------------------------------------------------------------
# (c) clean shutdown records the true last used value
# ---------------------------------------------------------------------
# The node has held only one worker id so far, so that is the one it
# takes back after the release.  Nothing else generates now: the last id
# stored is the last one issued.
my @old_phases = ('pgbench');
generate_ids($node, 'last', 1000);
$worker = $node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
my $last_ms = $node->safe_psql(
	'postgres', q{
SELECT floor(extract(epoch FROM snowid_timestamp(max(id))) * 1000)::bigint
FROM snowid_gen_ids WHERE phase = 'last'});
is( $node->safe_psql(
		'postgres', q{
SELECT s.last_used = snowid_timestamp(max(i.id))
FROM snowid_status() s, snowid_gen_ids i WHERE i.phase = 'last'
GROUP BY s.last_used}),
	't',
	'status shows the timestamp of the last id issued as last used');
push @old_phases, 'last';

my $offset = log_offset($node);
$node->stop;
like(
	slurp_file($node->logfile, $offset),
	qr/snowid lease keeper released worker id $worker \(released\)/,
	'clean shutdown: the keeper logs the release');

# Read the coordinator as the shutdown left it: no keeper this time.
set_preload($node, 0);
$node->start;
my $release = $node->safe_psql(
	'postgres', qq{
SELECT detail FROM snowid_coordinator.events
WHERE event = 'release' AND worker_id = $worker
ORDER BY event_id DESC LIMIT 1});
like($release, qr/^last used \d+, kept \d+$/, "release event recorded: $release");
my ($released_ms) = $release =~ /(\d+)$/;
is($released_ms, $last_ms,
	'release event carries the timestamp (Unix ms) of the last id issued');
is( $node->safe_psql(
		'postgres', qq{
SELECT high_water_ms || '|' || (owner IS NULL) || '|' || (released_at IS NOT NULL)
FROM snowid_coordinator.leases WHERE worker_id = $worker}),
	"$last_ms|true|true",
	'lease row: high-water mark is the last used value, no owner, released');
$node->stop;
set_preload($node, 1);

$node->start;
ok(wait_for_state($node, 'active'), 'after the clean restart: lease again');
is( $node->safe_psql(
		'postgres', q{
SELECT worker_id || '|' ||
	   (floor(extract(epoch FROM floor) * 1000)::bigint)
FROM snowid_status()}),
	"$worker|$last_ms",
	'the released worker id comes back with the last used value as its floor');
generate_ids($node, 'after_release', 2000);
cmp_ok(check_ids($node, 'after the clean restart', [@old_phases],
		['after_release']),
	'>', 0, 'after the clean restart: new ids share the worker id');
push @old_phases, 'after_release';


# ---------------------------------------------------------------------
# (b) restarts while a session generates
# ---------------------------------------------------------------------
generate_ids($node, 'before', 2000);
push @old_phases, 'before';

# Run a generator, wait until it has stored some ids, do $restart, wait
# until the node generates again, then store more ids under $after and
# check them against everything stored so far.  Unless the lease was
# released, the worker id held before may only come back once its lease
# has expired plus the safety period at the coordinator.
sub across
{
	my ($label, $gen_phase, $after, $restart, $released) = @_;

	my $gen = start_generator($node, $gen_phase);
	ok(wait_for_ids($node, $gen_phase, 500),
		"$label: the generator stores ids before the restart");
	my $before_worker = $node->safe_psql('postgres',
		'SELECT worker_id FROM snowid_status()');
	# A lower bound: a renewal before the restart can only push it later.
	my $cool_ms = $node->safe_psql(
		'postgres', qq{
SELECT (extract(epoch FROM l.expires_at) * 1000)::bigint + s.safety_ms
FROM snowid_coordinator.leases l, snowid_coordinator.settings s
WHERE l.worker_id = $before_worker});

	$restart->();

	ok(wait_until_up($node), "$label: node accepts connections again");
	stop_generator($node, $gen);
	push @old_phases, $gen_phase;
	ok(wait_for_state($node, 'active'), "$label: node takes a lease again");
	my ($after_worker, $acquired_ms) = split /\|/, $node->safe_psql(
		'postgres', q{
SELECT l.worker_id, (extract(epoch FROM l.acquired_at) * 1000)::bigint
FROM snowid_status() st
JOIN snowid_coordinator.leases l ON l.worker_id = st.worker_id});
	note("$label: worker id $before_worker before, $after_worker after");
	ok( $released
		  || $after_worker != $before_worker
		  || $acquired_ms >= $cool_ms,
		"$label: worker id $before_worker not granted again while its lease could still be in use"
	);

	generate_ids($node, $after, 2000);
	my $shared = check_ids($node, $label, [@old_phases], [$after]);
	push @old_phases, $after;
	return ($before_worker, $after_worker, $shared);
}

# Fast restart: the keeper releases the lease with the true last used
# value, so the node gets the same worker id back at once.
my ($w_before, $w_after, $shared) = across(
	'fast restart', 'gen_fast', 'fast',
	sub { $node->restart; }, 1);
is($w_after, $w_before, 'fast restart: the released worker id comes back');
cmp_ok($shared, '>', 0,
	'fast restart: new ids share the worker id with old ones');

# Immediate restart: no release; the old lease is still held at the
# coordinator, so the node takes another worker id.
($w_before, $w_after, $shared) = across(
	'immediate restart', 'gen_immediate', 'immediate',
	sub { $node->stop('immediate'); $node->start; });

# A backend SIGKILLed: the postmaster restarts everything (shared memory
# included).  The killed backend is the generator's own.
($w_before, $w_after, $shared) = across(
	'backend SIGKILL', 'gen_kill', 'crash',
	sub {
		my $pid = $node->safe_psql('postgres',
			q{SELECT pid FROM pg_stat_activity
			  WHERE application_name = 'snowid_gen_gen_kill'});
		like($pid, qr/^\d+$/, "backend SIGKILL: generator backend is $pid");
		my $offset = log_offset($node);
		is(kill('KILL', $pid), 1, 'backend SIGKILL: signal sent');
		ok( $node->wait_for_log(
				qr/all server processes terminated; reinitializing/,
				$offset),
			'backend SIGKILL: the postmaster restarts the server');
	});

# Immediate stop, and a start only once every lease of this node has
# expired plus the safety period (6 s + 2 s): a worker id used before
# comes back, and its floor puts new ids above the old ones.
($w_before, $w_after, $shared) = across(
	'immediate restart after cool-down', 'gen_cooled', 'cooled',
	sub {
		$node->stop('immediate');
		sleep(9);
		$node->start;
	});
cmp_ok($shared, '>', 0,
	'immediate restart after cool-down: a worker id used before comes back');

$node->stop;
note(sprintf('010_restarts took %.1f s', time - $started_at));
done_testing();
