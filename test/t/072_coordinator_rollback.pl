# A coordinator whose state goes back in time must never hand out a worker
# id that a live node may still use.  Three ways an operator does it, each
# under load on every node, with a pool of two worker ids (worker_bits =>
# 1) for three nodes, so that the waiting node is granted the first id the
# coordinator wrongly believes free:
#
#  1. pg_restore --clean --if-exists --single-transaction of a dump taken
#     while only node a held a lease, into the same database (same system
#     identifier and timeline: no identity fence applies);
#  2. DROP EXTENSION snowid_coordinator CASCADE, CREATE EXTENSION and
#     initialize() on the live cluster;
#  3. a storage snapshot of the data directory reverted (the server is
#     stopped hard, its files put back, and started).
#
# Each must end with no duplicate id anywhere.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $coord = snowid_coordinator_node('coord_rb', init => 'worker_bits => 1');

sub remote
{
	my ($name) = @_;
	my $n = snowid_remote_node($name, $coord, conf => "snowid.worker_bits = 1\n");
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION snowid');
	create_id_tables($n);
	return $n;
}

# The ids every node stored, and how many were issued twice.
sub duplicates
{
	my ($nodes) = @_;
	my $ids = cluster_ids($nodes);
	return (count_duplicates($ids), scalar @$ids);
}

my $a = remote('a');
ok(wait_for_state($a, 'active'), 'a holds a lease');
my $dump = $coord->basedir . '/coordinator.dump';
$coord->command_ok(
	[ 'pg_dump', '-Fc', '-f', $dump, '-d', $coord->connstr('postgres') ],
	'the coordinator is dumped while only a holds a lease');

my $b = remote('b');
ok(wait_for_state($b, 'active'), 'b holds the other lease');
my $c = remote('c');
ok(wait_for_state($c, 'no_free_worker'), 'c waits: no free worker id');
my $w_b = $b->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');

my @nodes = ($a, $b, $c);
my $phase = 0;
my @gens;
sub start_load
{
	$phase++;
	@gens = map { [ $_, start_generator($_, "p$phase", seconds => 90) ] } @nodes;
	ok(wait_for_ids($a, "p$phase", 200) && wait_for_ids($b, "p$phase", 200),
		"phase $phase: a and b generate");
}
sub stop_load
{
	stop_generator($_->[0], $_->[1]) for @gens;
}

# ---------------------------------------------------------------------
# 1. In-place restore of the dump.
start_load();
$coord->command_ok(
	[ 'pg_restore', '--clean', '--if-exists', '--single-transaction',
	  '-d', $coord->connstr('postgres'), $dump ],
	'pg_restore --clean --if-exists --single-transaction into the same database');
is($coord->safe_psql('postgres',
	"SELECT count(*) FROM snowid_coordinator.leases WHERE worker_id = $w_b AND owner IS NOT NULL"),
	'0', "the restored coordinator has no owner for b's worker id $w_b");
# Let c ask many times, and b renew, for three lease lengths.
sleep 18;
ok(poll_until($coord,
	q{SELECT count(*) > 0 FROM snowid_coordinator.events WHERE event = 'fence' AND detail LIKE '%created again%'}),
	'the restored coordinator fenced itself: its incarnation changed');
is(snowid_state($b), 'active', 'b kept generating');
isnt(snowid_state($c), 'active', 'c was never given b\'s worker id');
stop_load();
my ($dups, $total) = duplicates(\@nodes);
is($dups, 0, "restore in place: $total ids, none issued twice");
cmp_ok($total, '>', 1000, 'under load');
note 'events: ' . $coord->safe_psql('postgres',
	q{SELECT string_agg(event || coalesce(' ' || worker_id, '') || coalesce(': ' || detail, ''), E'\n' ORDER BY event_id) FROM snowid_coordinator.events});

# ---------------------------------------------------------------------
# 2. DROP EXTENSION ... CASCADE and a new CREATE EXTENSION + initialize().
start_load();
$coord->safe_psql('postgres', q{
DROP EXTENSION snowid_coordinator CASCADE;
CREATE EXTENSION snowid_coordinator;
SELECT snowid_coordinator.initialize(worker_bits => 1, lease_time => '6s',
	safety_period => '2s', lease_margin => '1s', single_server => true);
GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_node;
GRANT EXECUTE ON FUNCTION snowid_coordinator.lease_acquire_v2,
	snowid_coordinator.lease_renew_v2, snowid_coordinator.lease_release_v1
	TO snowid_node;
});
sleep 18;
isnt(snowid_state($c), 'active', 'c still has no worker id of a live node');
stop_load();
($dups, $total) = duplicates(\@nodes);
is($dups, 0, "drop and create: $total ids, none issued twice");
ok(wait_for_state($a, 'active', 30) && wait_for_state($b, 'active', 30),
	'a and b generate again');

# ---------------------------------------------------------------------
# 3. A storage snapshot reverted.  The snapshot is taken after a hard
# stop (as a crash-consistent snapshot would be), while c still waits.
$coord->stop('immediate');
my $snap = $coord->basedir . '/snapshot';
PostgreSQL::Test::RecursiveCopy::copypath($coord->data_dir, $snap);
$coord->start;
ok(wait_for_state($a, 'active', 30) && wait_for_state($b, 'active', 30),
	'a and b renew after the restart');
start_load();
# b lets go of its worker id, c takes it over: the snapshot knows neither.
$b->stop;
ok(wait_for_state($c, 'active', 40), 'c takes the worker id b released');
$coord->stop('immediate');
rmtree($coord->data_dir);
PostgreSQL::Test::RecursiveCopy::copypath($snap, $coord->data_dir);
chmod 0700, $coord->data_dir;
$coord->start;
$b->start;
@nodes = ($a, $b, $c);
@gens = (@gens[0, 2], [ $b, start_generator($b, "p${phase}b", seconds => 90) ]);
sleep 18;
ok(poll_until($coord,
	q{SELECT count(*) > 0 FROM snowid_coordinator.events WHERE event = 'fence' AND detail LIKE '%server started%'}),
	'the reverted coordinator fenced itself: its server started anew');
ok(!(snowid_state($b) eq 'active' && snowid_state($c) eq 'active'
	  && $b->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()') eq
		 $c->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()')),
	'b and c never hold one worker id at once');
stop_load();
($dups, $total) = duplicates(\@nodes);
is($dups, 0, "reverted snapshot: $total ids, none issued twice");

$_->stop for @nodes;
$coord->stop;
done_testing();
