# Failure behaviours 7, 8 and 9.
#
# (7) pool exhausted: a coordinator with 2 worker bits and 5 nodes; four
#     get leases, the pool view says low and the coordinator logs its
#     WARNING; the fifth refuses with state no_free_worker, SQLSTATE 53400
#     and a clear message, keeps retrying, and gets the worker id another
#     node releases on a clean shutdown, with ids above that node's;
# (8) layout mismatch: a node with snowid.sequence_bits = 11 against a
#     default coordinator: state layout_mismatch, 55000 naming both
#     layouts, nothing issued, no worker id held, also once the
#     coordinator grants to others;
# (9) two nodes with the same snowid.node_name: never the same worker id
#     (at start, across a clean restart of one and an immediate restart of
#     the other), both active, ids unique.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SnowidTest;

my $started_at = time;

# The default coordinator (for 8 and 9) waits out its initial fence while
# the pool coordinator is set up.
my $coord = snowid_coordinator_node('coord', no_wait => 1);
my $pool_coord = snowid_coordinator_node('pool_coord', init => 'worker_bits => 2');

# Every id a node stores, to check uniqueness across nodes at the end.
my %all_ids;
my $dups = 0;
sub collect
{
	my ($node) = @_;
	$dups += !!$all_ids{$_}++
	  for split /\n/, $node->safe_psql('postgres', 'SELECT id FROM snowid_gen_ids');
	return;
}

sub status
{
	my ($node, $columns) = @_;
	return $node->safe_psql('postgres', "SELECT $columns FROM snowid_status()");
}

sub pool_row
{
	return $pool_coord->safe_psql('postgres',
		'SELECT total, held, cooling_down, free, low FROM snowid_coordinator.worker_pool');
}

# ---------------------------------------------------------------------
# (7) pool exhausted
# ---------------------------------------------------------------------
my @pool;
foreach my $i (1 .. 4)
{
	my $node = snowid_remote_node("pool$i", $pool_coord,
		conf => "snowid.worker_bits = 2\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	create_id_tables($node);
	ok(wait_for_state($node, 'active'), "pool$i: holds a lease");
	generate_ids($node, 'pool', 500);
	push @pool, $node;
}
my %workers = map { status($_, 'worker_id') => $_->name } @pool;
is(join(',', sort keys %workers), '0,1,2,3', 'four nodes hold the four worker ids');
is(pool_row(), '4|4|0|0|t', 'pool view: 4 held, none free, low');
like(slurp_file($pool_coord->logfile),
	qr/WARNING:  snowid worker id pool is running low/,
	'the coordinator logs that the pool is running low');
like(slurp_file($pool[3]->logfile),
	qr/snowid coordinator warns: snowid worker id pool is running low/,
	'the node that took the last worker id logs the coordinator\'s warning');

my $fifth = snowid_remote_node('pool5', $pool_coord,
	conf => "snowid.worker_bits = 2\n");
$fifth->start;
$fifth->safe_psql('postgres', 'CREATE EXTENSION snowid');
create_id_tables($fifth);
ok(wait_for_state($fifth, 'no_free_worker', 60), 'pool5: state no_free_worker');
is(status($fifth, "coalesce(worker_id::text, 'none') || '|' || detail"),
	'none|All 4 worker ids are held or cooling down.',
	'pool5: no worker id; the detail says all 4 are held or cooling down');
foreach my $call ('snowid_nextval()', 'snowid_generate(10)')
{
	my ($state, $message, $err) = psql_error($fifth, 'postgres', "SELECT $call");
	is($state, '53400', "pool5: $call refused with 53400");
	is($message, 'snowid found no free worker id', "pool5: $call: the message says why");
	like($err, qr/DETAIL:  All 4 worker ids are held or cooling down\.\nHINT:  Retry once another node releases its worker id/,
		"pool5: $call: detail and hint");
}
is($fifth->safe_psql('postgres', 'SELECT ids FROM snowid_stats'), '0',
	'pool5: no id issued');

# It keeps asking (once a second), and says so in its log only once.
my $refused_sql = q{SELECT count(*) FROM snowid_coordinator.events
WHERE event = 'refused' AND node_name = 'pool5'};
my $refused = $pool_coord->safe_psql('postgres', $refused_sql);
cmp_ok($refused, '>=', 1, "pool5: the coordinator recorded $refused refusal(s)");
ok(poll_until($pool_coord, "SELECT ($refused_sql) >= $refused + 2", 't', 10),
	'pool5: it keeps retrying');
my @warned = slurp_file($fifth->logfile) =~
  /WARNING:  snowid lease keeper was refused a lease: no_free_worker/g;
is(scalar(@warned), 1, 'pool5: the refusal is logged once, not at every retry');
is(status($fifth, 'state'), 'no_free_worker', 'pool5: still no_free_worker');

# A node shuts down cleanly: it releases its worker id, the fifth takes it
# and starts above the last id the other one issued.
my $leaving = $pool[1];
my $freed = status($leaving, 'worker_id');
generate_ids($leaving, 'pool_last', 500);
collect($leaving);
my $leaving_max = $leaving->safe_psql('postgres', 'SELECT max(id) FROM snowid_gen_ids');
my $offset = log_offset($leaving);
$leaving->stop;
like(slurp_file($leaving->logfile, $offset),
	qr/snowid lease keeper released worker id $freed \(released\)/,
	'pool2: releases its worker id on a clean shutdown');
ok(wait_for_state($fifth, 'active', 60), 'pool5: gets a lease once one is released');
is(status($fifth, 'worker_id'), $freed, "pool5: the released worker id $freed");
my ($released_ms, $grants) = split /\|/, $pool_coord->safe_psql('postgres', qq{
SELECT substring(r.detail from 'last used (\\d+)'),
	   (SELECT count(*) FROM snowid_coordinator.events g
		 WHERE g.event = 'grant' AND g.worker_id = $freed AND g.event_id > r.event_id)
  FROM snowid_coordinator.events r
 WHERE r.event = 'release' AND r.worker_id = $freed ORDER BY r.event_id DESC LIMIT 1});
my $floor_ms = status($fifth, 'floor(extract(epoch FROM floor) * 1000)::bigint');
if ($grants == 1)
{
	is($floor_ms, $released_ms,
		'pool5: its floor is the last used timestamp pool2 released with');
}
else
{
	# A grant whose answer the keeper gave up on in time (a slow
	# coordinator) declared a high-water mark of its own in between.
	diag("pool5: $grants grants of worker id $freed since the release");
	cmp_ok($floor_ms, '>=', $released_ms,
		'pool5: its floor is at least the last used timestamp pool2 released with');
}
generate_ids($fifth, 'pool', 1000);
is($fifth->safe_psql('postgres', "SELECT count(*) FROM snowid_gen_ids WHERE id <= $leaving_max"),
	'0', 'pool5: every id above every id pool2 issued with the same worker id');
is(pool_row(), '4|4|0|0|t', 'pool view: 4 held again, low');
collect($_) for $fifth, @pool[ 0, 2, 3 ];
$_->stop for $fifth, @pool[ 0, 2, 3 ];
is($pool_coord->safe_psql('postgres', 'SELECT held || \'|\' || low FROM snowid_coordinator.worker_pool'),
	'0|false', 'pool view: all released, not low');
$pool_coord->stop;

# ---------------------------------------------------------------------
# (8) layout mismatch
# ---------------------------------------------------------------------
my $skewed = snowid_remote_node('skewed', $coord, conf => "snowid.sequence_bits = 11\n");
$skewed->start;
$skewed->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($skewed, 'layout_mismatch', 20), 'skewed: state layout_mismatch');
my $ours   = 'timestamp_bits=41 worker_bits=10 region_bits=0 sequence_bits=12 epoch_ms=1735689600000';
my $theirs = 'timestamp_bits=42 worker_bits=10 region_bits=0 sequence_bits=11 epoch_ms=1735689600000';
foreach my $call ('snowid_nextval()', 'snowid_generate(10)')
{
	my ($state, $message, $err) = psql_error($skewed, 'postgres', "SELECT $call");
	is($state, '55000', "skewed: $call refused with 55000");
	is($message, "snowid layout of this node differs from the coordinator's",
		"skewed: $call: the message says the layouts differ");
	like($err, qr/DETAIL:  The coordinator's layout is \Q$ours\E; the node's is \Q$theirs\E\./,
		"skewed: $call: the detail names both layouts");
}

# ---------------------------------------------------------------------
# (9) two nodes with the same node name
# ---------------------------------------------------------------------
my @twins = map {
	snowid_remote_node($_, $coord, conf => "snowid.node_name = 'twin'\n")
} ('twin_a', 'twin_b');
$_->start for @twins;
foreach my $twin (@twins)
{
	$twin->safe_psql('postgres', 'CREATE EXTENSION snowid');
	create_id_tables($twin);
}

sub twins_check
{
	my ($phase, $label) = @_;
	foreach my $twin (@twins)
	{
		ok(wait_for_state($twin, 'active', 60), $twin->name . ": $label: active");
		is(status($twin, 'node_name'), 'twin', $twin->name . ": $label: node name twin");
	}
	my @w = map { status($_, 'worker_id') } @twins;
	isnt($w[0], $w[1], "$label: different worker ids ($w[0], $w[1])");
	is($coord->safe_psql('postgres', qq{
SELECT count(*) FROM snowid_coordinator.worker_leases
 WHERE node_name = 'twin' AND state = 'held' AND worker_id IN ($w[0], $w[1])}),
		'2', "$label: the coordinator shows both held under the name twin");
	my @runs = map { start_generator($_, $phase, batch => 20, seconds => 20) } @twins;
	ok(wait_for_ids($twins[$_], $phase, 1000), $twins[$_]->name . ": $label: generating")
	  for 0, 1;
	is(stop_generator($twins[$_], $runs[$_]), 0, $twins[$_]->name . ": $label: generator ended cleanly")
	  for 0, 1;
	return @w;
}

my @w1 = twins_check('tw1', 'twins start');

# The coordinator now grants to others; the skewed node still gets nothing.
is(status($skewed, 'state'), 'layout_mismatch', 'skewed: still layout_mismatch');
is(status($skewed, "coalesce(worker_id::text, 'none') || '|' || coalesce(last_used::text, 'none')"),
	'none|none', 'skewed: no worker id, nothing used');
is($skewed->safe_psql('postgres', 'SELECT ids FROM snowid_stats'), '0', 'skewed: no id issued');
is($coord->safe_psql('postgres', q{
SELECT count(*) FROM snowid_coordinator.leases WHERE node_name = 'skewed'}), '0',
	'skewed: no lease row at the coordinator');
like($coord->safe_psql('postgres', q{
SELECT count(*) || '|' || min(detail) FROM snowid_coordinator.events
 WHERE event = 'refused' AND node_name = 'skewed'}),
	qr/^[1-9]\d*\|The coordinator's layout is \Q$ours\E; the node's is \Q$theirs\E\.$/,
	'skewed: the coordinator records the refusals with both layouts');
$skewed->stop;

# One twin restarts cleanly (releases, and takes a worker id back), the
# other restarts at once without releasing: still never the same.
$twins[0]->restart;
# (Which free worker id it takes is open: the coordinator prefers the most
# recently granted one recorded under the name twin, which may be either
# twin's.)
my @w2 = twins_check('tw2', 'after a clean restart of twin_a');
isnt($w2[0], $w1[1], 'twin_a does not take its twin\'s worker id');
$twins[1]->stop('immediate');
$twins[1]->start;
my @w3 = twins_check('tw3', 'after an immediate restart of twin_b');
isnt($w3[1], $w1[1], 'twin_b, whose old lease is still held by the dead token, gets another worker id');

collect($_) for @twins;
is($dups, 0, scalar(keys %all_ids) . ' ids from all nodes, none twice');

$_->stop for @twins;
$coord->stop;
note(sprintf('043_pool took %.1f s', time - $started_at));
done_testing();
