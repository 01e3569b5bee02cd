# Failure behaviour 2: a node's postmaster is SIGKILLed mid-load and
# started again.  It gets a lease again: while its old lease may still be
# in use (held by the dead token until expiry plus the safety period at
# the coordinator) another worker id, afterwards its old one; no id issued
# after the crash equals one issued before, and where the worker id comes
# back every new id is above every old one.
#
# Ids are kept as clients saw them (an id reader's output, committed or
# not) and as committed rows (a generator and pgbench into a table with a
# snowid primary key), all of them in snowid_gen_ids on the node.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SnowidTest;

my $started_at = time;
my $safety_ms  = 2000;    # snowid_coordinator_node's safety period

my $coord = snowid_coordinator_node('coord');
my $node  = snowid_remote_node('crashy', $coord);
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowid;
CREATE TABLE orders (id snowid PRIMARY KEY DEFAULT snowid_nextval(),
	phase text NOT NULL);
});
create_id_tables($node);
ok(wait_for_state($node, 'active'), 'node holds a lease');

my $dir = $node->basedir;
my @old_phases;

# The coordinator's view of one worker id's lease.
sub lease_row
{
	my ($worker, $columns) = @_;
	return split /\|/, $coord->safe_psql('postgres',
		"SELECT $columns FROM snowid_coordinator.leases WHERE worker_id = $worker");
}

# Load the node (an id reader, a generator and pgbench), SIGKILL its
# postmaster mid-load, wait until every server process is gone; if
# $cooled, wait until the old lease has expired plus the safety period at
# the coordinator; start the node again, store the ids seen before the
# crash, and wait for a lease.  Returns the worker ids before and after,
# whether the old one was free at the first grant after the restart, that
# grant's worker id, and how many grants the node took since.
sub crash_and_restart
{
	my ($label, $cooled) = @_;

	my $worker = $node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
	append_to_file("$dir/insert_$label.sql",
		"INSERT INTO orders (phase) VALUES ('pgbench_$label');\n");
	my $reader = start_id_reader($node, 100000, 20);
	my $gen = start_generator($node, "gen_$label");
	my ($bench_out, $bench_err) = ('', '');
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '1', '-t', '100000',
		  '-f', "$dir/insert_$label.sql", '-h', $node->host,
		  '-p', $node->port, 'postgres' ],
		'>', \$bench_out, '2>', \$bench_err, IPC::Run::timeout(120));
	ok(wait_for_ids($node, "gen_$label", 1000), "$label: the generator stores ids");
	ok(poll_until($node,
			"SELECT count(*) >= 1000 FROM orders WHERE phase = 'pgbench_$label'"),
		"$label: pgbench inserts rows");

	my @pids = server_pids($node);
	cmp_ok(scalar(@pids), '>', 3, "$label: postmaster and " . (@pids - 1) . ' children');
	my $offset = log_offset($node);
	$node->kill9;
	ok(wait_for_pids_gone(\@pids), "$label: every server process is gone");
	unlike(slurp_file($node->logfile, $offset), qr/released worker id/,
		"$label: no release after SIGKILL");

	my @seen = finish_id_reader($reader);
	stop_generator($node, $gen);
	eval { $bench->finish; 1 } or eval { $bench->kill_kill };
	like($bench_err, qr/server closed the connection|connection to server was lost|terminat/,
		"$label: pgbench lost its connections")
	  or diag("pgbench stdout:\n$bench_out\nstderr:\n$bench_err");
	cmp_ok(scalar(@seen), '>', 1000,
		"$label: the id reader saw " . scalar(@seen) . ' ids before the crash');

	# The dead keeper renews nothing more: this is the old lease's expiry.
	my ($cool_ms, $old_owned) = lease_row($worker,
		"(extract(epoch FROM expires_at) * 1000)::bigint + $safety_ms, owner IS NOT NULL");
	is($old_owned, 't', "$label: the coordinator still records worker id $worker as owned");
	is($coord->safe_psql('postgres', qq{
SELECT state <> 'free' FROM snowid_coordinator.worker_leases WHERE worker_id = $worker}),
		't', "$label: worker id $worker is not free right after the crash");

	ok( poll_until($coord, qq{
SELECT state = 'free' FROM snowid_coordinator.worker_leases WHERE worker_id = $worker},
			't', 15),
		"$label: worker id $worker cools down at the coordinator (expiry plus safety)")
	  if $cooled;
	my $mark = $coord->safe_psql('postgres',
		'SELECT coalesce(max(event_id), 0) FROM snowid_coordinator.events');
	$node->start;
	store_ids($node, "seen_$label", \@seen);
	$node->safe_psql('postgres',
		"INSERT INTO snowid_gen_ids (phase, id) SELECT phase, id FROM orders WHERE phase = 'pgbench_$label'");
	push @old_phases, "seen_$label", "gen_$label", "pgbench_$label";

	ok(wait_for_state($node, 'active'), "$label: node holds a lease again");
	my $new_worker = $node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
	my ($acquired_ms) = lease_row($new_worker,
		'(extract(epoch FROM acquired_at) * 1000)::bigint');
	note("$label: worker id $worker before, $new_worker after; the new grant came "
		  . ($acquired_ms - $cool_ms) . ' ms after the old lease cooled down');
	ok($new_worker != $worker || $acquired_ms > $cool_ms,
		"$label: worker id $worker not granted again before its lease expired plus the safety period");

	# The node prefers its most recent worker id: its first grant after the
	# restart is that one exactly when it was free.  (The first grant, as
	# the coordinator recorded it: a grant whose answer the keeper gave up
	# on in time is a grant too, and the keeper then takes another one.)
	my ($first_worker, $first_ms, $grants) = split /\|/, $coord->safe_psql('postgres', qq{
SELECT worker_id, (extract(epoch FROM at) * 1000)::bigint, count(*) OVER ()
  FROM snowid_coordinator.events
 WHERE event = 'grant' AND node_name = 'crashy' AND event_id > $mark
 ORDER BY event_id LIMIT 1});
	note("$label: $grants grant(s) after the restart; the first one for worker id $first_worker")
	  if $grants != 1;
	my $old_was_free = $first_ms > $cool_ms ? 1 : 0;
	is($first_worker == $worker ? 1 : 0, $old_was_free,
		$old_was_free
		? "$label: the old worker id was free at the grant and came back"
		: "$label: the old worker id was still held by the dead lease; another one was granted");
	return ($worker, $new_worker, $old_was_free, $first_worker, $grants);
}

# After a restart: more ids (all three ways), then no duplicate anywhere,
# and with a worker id used before, every new id above every old one.
sub after_restart
{
	my ($label) = @_;
	my $reader = start_id_reader($node, 100, 20);
	append_to_file("$dir/after_$label.sql",
		"INSERT INTO orders (phase) VALUES ('after_pgbench_$label');\n");
	my ($out, $err) = ('', '');
	ok( IPC::Run::run(
			[ 'pgbench', '-n', '-c', '2', '-j', '1', '-t', '500',
			  '-f', "$dir/after_$label.sql", '-h', $node->host,
			  '-p', $node->port, 'postgres' ],
			'>', \$out, '2>', \$err),
		"$label: pgbench after the restart: every insert succeeds (primary key)")
	  or diag($err);
	generate_ids($node, "after_$label", 1000);
	my @seen = finish_id_reader($reader);
	is(scalar(@seen), 2100, "$label: the id reader got 2100 ids after the restart");
	store_ids($node, "after_seen_$label", \@seen);
	$node->safe_psql('postgres', qq{
INSERT INTO snowid_gen_ids (phase, id)
	SELECT phase, id FROM orders WHERE phase = 'after_pgbench_$label'});
	my @new = ("after_$label", "after_seen_$label", "after_pgbench_$label");
	my $shared = check_ids($node, $label, [@old_phases], [@new]);
	push @old_phases, @new;
	return $shared;
}

generate_ids($node, 'first', 500);
push @old_phases, 'first';

# Crash, start again at once: the old lease is still held by the dead
# token (expiry plus safety is 8 s after its last renewal).
my ($w1, $w2, $free) = crash_and_restart('crash1', 0);
if (!$free)
{
	isnt($w2, $w1, "crash1: back before its old lease cooled down: a different worker id ($w2, not $w1)");
}
else
{
	# Only when the restart and the first grant took longer than the old
	# lease's expiry plus the safety period (a very slow machine).
	diag('crash1: the node came back only after its old lease cooled down');
}
after_restart('crash1');

# Crash again, and start only after the lease has expired plus the safety
# period: the node gets its most recent worker id back, with a floor above
# everything it issued under it.
my ($w3, $w4, $free2, $first, $grants) = crash_and_restart('crash2', 1);
ok($free2, 'crash2: the old lease had cooled down at the grant');
is($first, $w3, "crash2: the node's most recent worker id ($w3) was granted again");
my $shared = after_restart('crash2');
if ($grants == 1)
{
	is($w4, $w3, "crash2: the node holds its most recent worker id ($w3) again");
	cmp_ok($shared, '>', 0,
		'crash2: new ids share the worker id with ids from before the crash');
}
else
{
	# The keeper gave up on the answer of its first grant in time (the
	# coordinator was slow) and took another worker id; the first one stays
	# with a token nobody holds until it expires.
	diag("crash2: the keeper took $grants grants; it holds worker id $w4");
}

my ($total, $distinct) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(*), count(DISTINCT id) FROM snowid_gen_ids');
is($distinct, $total, "$total ids stored over two crashes, all distinct");
is($node->safe_psql('postgres', q{
SELECT count(*) FROM snowid_gen_errors}), '0',
	'the generators saw no refusal');

$node->stop;
$coord->stop;
note(sprintf('041_node_crash took %.1f s', time - $started_at));
done_testing();
