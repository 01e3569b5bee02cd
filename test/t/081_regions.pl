# A coordinator per region.  Two regions (region_bits => 1), each with a
# coordinator that serves only its own (initialize(regions => ...)), and
# two nodes per region under load.  A region-1 node pointed at region 0's
# coordinator never generates.  Region 0's coordinator stops: a new region-1
# node still gets a lease, and region-0 nodes refuse only once their leases
# run out.  No id is issued twice anywhere.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SnowidTest;

my %coord;
for my $r (0, 1)
{
	$coord{$r} = snowid_coordinator_node("coord_r$r",
		init => "worker_bits => 3, region_bits => 1, regions => ARRAY[$r]");
}
is($coord{0}->safe_psql('postgres',
	q{SELECT string_agg(region || ':' || served, ' ' ORDER BY region) FROM snowid_coordinator.worker_pool}),
	'0:true 1:false', "region 0's coordinator shows which regions it serves");

sub region_node
{
	my ($name, $region, $coordinator) = @_;
	my $n = snowid_remote_node($name, $coordinator, conf => qq{
snowid.worker_bits = 3
snowid.region_bits = 1
snowid.region = $region
});
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION snowid');
	create_id_tables($n);
	return $n;
}

my @r0 = map { region_node("r0$_", 0, $coord{0}) } qw(a b);
my @r1 = map { region_node("r1$_", 1, $coord{1}) } qw(a b);
for my $n (@r0, @r1)
{
	ok(wait_for_state($n, 'active'), $n->name . ' holds a lease');
}
for my $n (@r0)
{
	cmp_ok($n->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()'), '<', 4,
		$n->name . ": a worker id of region 0");
}
for my $n (@r1)
{
	cmp_ok($n->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()'), '>=', 4,
		$n->name . ": a worker id of region 1");
}

# A region-1 node misconfigured to lease from region 0's coordinator.
my $wrong = region_node('r1_wrong', 1, $coord{0});
ok(wait_for_state($wrong, 'region_not_served', 30), 'a region-1 node at region 0\'s coordinator: region_not_served');
like($wrong->safe_psql('postgres', 'SELECT detail FROM snowid_status()'),
	qr/serves regions 0; the node's region is 1/, 'its detail names the regions served');
my ($state, $msg) = psql_error($wrong, 'postgres', 'SELECT snowid_nextval()');
is($state, '55000', 'it does not generate');

my @gens = map { [ $_, start_generator($_, 'regions', seconds => 90) ] } (@r0, @r1, $wrong);
ok(wait_for_ids($r0[0], 'regions', 200) && wait_for_ids($r1[0], 'regions', 200), 'all regions generate');

# Region 0's coordinator goes away.
my $t_stop = time;
$coord{0}->stop;
my $r1c = region_node('r1c', 1, $coord{1});
ok(wait_for_state($r1c, 'active', 30), 'a new region-1 node still gets a lease');
my $still = snowid_state($r0[0]);
my $t_check = time - $t_stop;
SKIP:
{
	skip sprintf('the check came %.1f s after the stop, too late to see the lease still valid', $t_check), 1
	  if $t_check > 3;
	is($still, 'active', sprintf('region-0 nodes keep generating while their leases last (%.1f s after the stop)', $t_check));
}
for my $n (@r0)
{
	ok(wait_for_state($n, 'expired', 20), $n->name . ' refuses once its lease runs out');
}
is(snowid_state($r1[0]), 'active', 'region 1 is unaffected');
push @gens, [ $r1c, start_generator($r1c, 'regions', seconds => 30) ];
ok(wait_for_ids($r1c, 'regions', 200), 'the new region-1 node generates');
stop_generator($_->[0], $_->[1]) for @gens;

is($wrong->safe_psql('postgres', 'SELECT count(*) FROM snowid_gen_ids'), '0',
	'the misconfigured node issued no id');
my $ids = cluster_ids([ @r0, @r1, $r1c, $wrong ]);
is(count_duplicates($ids), 0, scalar(@$ids) . ' ids in both regions, none issued twice');
my %by_region;
$by_region{ $_->[1] < 4 ? 0 : 1 }++ for @$ids;
ok($by_region{0} && $by_region{1}, "ids from both regions ($by_region{0} / $by_region{1})");

$_->stop for (@r0, @r1, $r1c, $wrong);
$coord{1}->stop;
done_testing();
