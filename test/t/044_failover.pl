# Failure behaviour 4: coordinator failover.
#
# The coordinator is a primary with a synchronous standby, initialised
# without single_server, so it grants nothing while
# synchronous_standby_names is empty.  Two nodes lease from it through a
# multi-host conninfo (primary, standby; target_session_attrs=read-write).
# Under load the primary is killed (immediate stop) and the standby
# promoted: the nodes' keepers find the new primary by themselves, their
# leases renew there (same worker ids, no new acquisition), generation
# goes on, and no id is issued twice.  The promoted coordinator is on a
# new timeline, so it fences itself: a 'fence' event, and new grants are
# refused for a lease plus the safety period while renewals go on.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use SnowidTest;

my $t_start = time;

# ---- coordinator primary and its synchronous standby ----
my $primary = snowid_coordinator_node(
	'coord_primary',
	allows_streaming => 1,
	single_server => 0,
	no_wait => 1);
$primary->backup('standby_base');
my $standby = PostgreSQL::Test::Cluster->new('coord_standby');
$standby->init_from_backup($primary, 'standby_base', has_streaming => 1);
# Name the walreceiver, so synchronous_standby_names can name it.
$standby->append_conf('postgresql.conf',
	    "primary_conninfo = 'host="
	  . $primary->host
	  . ' port='
	  . $primary->port
	  . " application_name=coord_standby'");
$standby->start;

# ---- two nodes, multi-host conninfo: primary first, then the standby ----
my $conninfo = coordinator_conninfo($primary, $standby);
like($conninfo, qr/target_session_attrs=read-write/,
	'nodes use a read-write multi-host conninfo');
my @nodes;
foreach my $name ('node1', 'node2')
{
	my $node = snowid_remote_node($name, [ $primary, $standby ],
		conf => "log_min_messages = warning\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	create_id_tables($node);
	push @nodes, $node;
}

# ---- no synchronous standby named: no grant ----
ok(wait_until_unfenced($primary), 'the new coordinator\'s initial fence is over');
foreach my $node (@nodes)
{
	ok( poll_until(
			$node,
			q{SELECT state = 'no_lease_yet' AND detail LIKE '%synchronous_standby_names is empty%'
			  FROM snowid_status()},
			't', 15),
		$node->name . ': refused a lease while synchronous_standby_names is empty');
}
is(probe_grant($primary), 'no_sync_standby',
	'a grant is refused with status no_sync_standby');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM snowid_coordinator.leases'),
	'0', 'nothing was granted without a synchronous standby');

# ---- name the standby: grants ----
$primary->safe_psql('postgres',
	"ALTER SYSTEM SET synchronous_standby_names = 'coord_standby'");
$primary->reload;
ok( poll_until(
		$primary,
		q{SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'coord_standby'},
		't', 30),
	'the standby is synchronous');
my %worker;
foreach my $node (@nodes)
{
	ok(wait_for_state($node, 'active', 30), $node->name . ' holds a lease');
	$worker{ $node->name } =
	  $node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
}
isnt($worker{node1}, $worker{node2}, 'distinct worker ids');

# ---- under load, kill the primary, promote the standby ----
my @gens = map { start_generator($_, 'load', seconds => 120, batch => 50) } @nodes;
ok(wait_for_ids($_, 'load', 2000), $_->name . ': generating') for @nodes;

# The grants and the renewals so far reached the standby before they were
# reported (synchronous commit).
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('flush'));
is( $standby->safe_psql(
		'postgres',
		q{SELECT string_agg(worker_id::text || ':' || node_name, ',' ORDER BY node_name)
		  FROM snowid_coordinator.leases WHERE owner IS NOT NULL}),
	"$worker{node1}:node1,$worker{node2}:node2",
	'the standby holds both leases');

my %before;
foreach my $node (@nodes)
{
	my ($acq, $ren, $fail) = split /\|/, $node->safe_psql('postgres',
		'SELECT lease_acquisitions, lease_renewals, lease_renewal_failures FROM snowid_stats');
	$before{ $node->name } =
	  { acquisitions => $acq, renewals => $ren, failures => $fail };
}

# The primary is gone for 2.5 s before the standby is promoted: more than
# a renewal interval (2 s), less than the lease (6 s).  Meanwhile the
# keepers find the primary down and the standby read-only.
my $t_kill = time;
$primary->stop('immediate');
sleep 2.5;
$standby->promote;
my $t_promoted = time;
note sprintf('primary killed; standby promoted %.2f s later', $t_promoted - $t_kill);
my $promoted_at = $standby->safe_psql('postgres', 'SELECT now()');

# ---- the nodes find the new primary and renew there ----
foreach my $node (@nodes)
{
	my $name = $node->name;
	ok( poll_until(
			$node,
			"SELECT lease_renewals >= $before{$name}{renewals} + 2 FROM snowid_stats",
			't', 30),
		"$name: renewals go on after the failover");
	ok(wait_for_state($node, 'active', 30), "$name: active after the failover");
	cmp_ok($node->safe_psql('postgres', 'SELECT lease_renewal_failures FROM snowid_stats'),
		'>', $before{$name}{failures},
		"$name: renewals failed while no primary was there");
	is($node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()'),
		$worker{$name}, "$name: same worker id");
	is($node->safe_psql('postgres', 'SELECT lease_acquisitions FROM snowid_stats'),
		$before{$name}{acquisitions},
		"$name: the lease was renewed, not taken again");
	like($node->safe_psql('postgres', 'SELECT coordinator FROM snowid_status()'),
		qr/target_session_attrs=read-write/, "$name: status shows the multi-host conninfo");
}
is( $standby->safe_psql(
		'postgres', qq{
SELECT count(*) FROM snowid_coordinator.worker_leases
WHERE state = 'held' AND renewed_at > '$promoted_at'}),
	'2',
	'the new primary records renewals of both leases');
# Each generator made ids after the failover.  The generator stores
# clock_timestamp() (each node's clock; all on this machine).
foreach my $node (@nodes)
{
	ok(wait_for_ids($node, 'load', 500, $promoted_at),
		$node->name . ': ids generated after the failover');
}

# ---- the promoted coordinator fenced itself ----
my ($timeline, $fenced) = split /\|/, $standby->safe_psql('postgres',
	'SELECT timeline, fenced_until > now() FROM snowid_coordinator.settings');
cmp_ok($timeline, '>', 1, "the recorded timeline is the new one ($timeline)");
is( $standby->safe_psql(
		'postgres', qq{
SELECT count(*) FROM snowid_coordinator.events
WHERE event = 'fence' AND detail LIKE '%to system identifier % timeline $timeline'}),
	'1',
	'a fence event on the new primary names the new timeline');
my $probe = probe_grant($standby);
if ($fenced eq 't')
{
	is($probe, 'fenced', 'the new primary refuses grants while fenced');
}
else
{
	# The fence (a lease plus the safety period) is over already; this
	# primary has no synchronous standby of its own.
	is($probe, 'no_sync_standby', 'the new primary refuses grants (fence over)');
}
my $fence_floor_ok = $standby->safe_psql(
	'postgres', q{
SELECT s.fence_floor_ms >= floor(extract(epoch FROM e.at) * 1000) + s.lease_ms + s.margin_ms
FROM snowid_coordinator.settings s,
	 snowid_coordinator.events e WHERE e.event = 'fence'});
is($fence_floor_ok, 't',
	'the fence floor lies a lease and a margin past the fence');

# ---- stop the load; every id unique ----
is(stop_generator($nodes[$_], $gens[$_]), 0, $nodes[$_]->name . ': generator ran to the end')
  for 0 .. 1;
foreach my $node (@nodes)
{
	my ($errors, $kinds) = split /\|/, $node->safe_psql('postgres',
		q{SELECT count(*), string_agg(DISTINCT sqlstate || ' ' || message, '; ') FROM snowid_gen_errors});
	note $node->name . ": $errors refused rounds during the failover"
	  . ($kinds ? ": $kinds" : '');
	is( $node->safe_psql(
			'postgres',
			q{SELECT count(*) FROM snowid_gen_errors WHERE sqlstate <> '57P03'}),
		'0',
		$node->name . ': any refusal was a lease refusal (57P03)');
	is( $node->safe_psql(
			'postgres', 'SELECT count(DISTINCT snowid_worker(id)) FROM snowid_gen_ids'),
		'1',
		$node->name . ': one worker id throughout');
}
my $ids = cluster_ids(\@nodes);
cmp_ok(scalar(@$ids), '>', 5000, scalar(@$ids) . ' ids from both nodes');
is(count_duplicates($ids), 0, 'no id issued twice across the cluster');

# A fresh session's ids still increase.
foreach my $node (@nodes)
{
	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM (
	SELECT id, lag(id) OVER (ORDER BY ord) AS prev
	  FROM snowid_generate(10000) WITH ORDINALITY AS g(id, ord)) s
 WHERE id <= prev}), '0', $node->name . ': ids increase in call order');
	is( $node->safe_psql(
			'postgres',
			q{SELECT snowid_nextval() > max(id) FROM snowid_gen_ids}),
		't',
		$node->name . ': the next id is above all earlier ones (same lease)');
}

$_->stop for @nodes;
is( $standby->safe_psql(
		'postgres',
		"SELECT count(*) FROM snowid_coordinator.events WHERE event = 'release'"),
	'2',
	'both nodes released their leases to the new primary');
$standby->stop;
note sprintf('044_failover took %.1f s', time - $t_start);
done_testing();
