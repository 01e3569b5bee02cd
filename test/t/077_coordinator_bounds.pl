# The coordinator does not trust what callers declare, and nodes and
# coordinators of different versions meet.
#  - A grant's floor is stored; a release is clamped to [floor, high-water
#    mark]; a grant to a node clock beyond now + max_clock_offset is
#    refused; a renewal's declared clock is clamped.
#  - Protocol 1 (a 1.0 node) still works against a 1.1 coordinator.
#  - A 1.1 node against a 1.0 coordinator refuses to generate with a
#    detail saying what to do, and generates once the coordinator is
#    updated.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $coord = snowid_coordinator_node('coord_bounds');
sub q1 { return $coord->safe_psql('postgres', $_[0]); }

my $grant = q{
SELECT a.status || ' ' || coalesce(a.worker_id::text, '-') || ' ' || coalesce(a.floor_ms::text, '-')
  FROM snowid_coordinator.settings s,
  LATERAL snowid_coordinator.lease_acquire_v2('%s', 'probe',
	s.timestamp_bits, s.worker_bits, s.region_bits, s.sequence_bits, s.epoch_ms,
	NULL, snowid_coordinator.now_ms() + %d) a};
my $t1 = '00000000-0000-4000-8000-000000000001';
my ($st, $w, $floor) = split / /, q1(sprintf($grant, $t1, 0));
is($st, 'granted', 'a grant');
is(q1("SELECT floor_ms FROM snowid_coordinator.leases WHERE worker_id = $w"), $floor,
	'its floor is stored with the lease');
my ($st2, $w2) = split / /, q1(sprintf($grant, $t1, 0));
is("$st2 $w2", "granted $w", 'the same token asking again gets the same lease');

# Renewal with a clock 10 minutes ahead: the stored high-water mark is
# bounded by the coordinator's clock + max_clock_offset + lease + margin.
q1(qq{SELECT snowid_coordinator.lease_renew_v2('$t1', $w, snowid_coordinator.now_ms() + 600000,
	0, true)});
cmp_ok(q1(qq{SELECT high_water_ms - snowid_coordinator.now_ms() FROM snowid_coordinator.leases WHERE worker_id = $w}),
	'<=', 1000 + 6000 + 1000, 'a renewal cannot push the high-water mark past now + bound + lease + margin');

# Release far in the future: clamped to the high-water mark.
my $hw = q1("SELECT high_water_ms FROM snowid_coordinator.leases WHERE worker_id = $w");
is(q1(qq{SELECT status FROM snowid_coordinator.lease_release_v1('$t1', $w, 9000000000000000)}),
	'released', 'released');
is(q1("SELECT high_water_ms FROM snowid_coordinator.leases WHERE worker_id = $w"), $hw,
	'a release declaring a far future last use is clamped to the high-water mark');

# Release below the floor: clamped to the floor.
my $t2 = '00000000-0000-4000-8000-000000000002';
my (undef, $w3, $floor3) = split / /, q1(sprintf($grant, $t2, 0));
q1(qq{SELECT snowid_coordinator.lease_release_v1('$t2', $w3, 0)});
cmp_ok(q1("SELECT high_water_ms FROM snowid_coordinator.leases WHERE worker_id = $w3"), '>=', $floor3,
	'a release declaring a last use below the floor is clamped to the floor');

# A grant to a clock beyond the bound.
my ($st4) = split / /, q1(sprintf($grant, '00000000-0000-4000-8000-000000000004', 600000));
is($st4, 'clock_offset', 'a grant to a node clock 10 minutes ahead is refused');
($st4) = split / /, q1(sprintf($grant, '00000000-0000-4000-8000-000000000005', 500));
is($st4, 'granted', 'one within the bound (0.5 s ahead) is granted');

# Protocol 1 against a 1.1 coordinator.
my $v1 = q1(q{
SELECT a.status || ' ' || a.worker_id FROM snowid_coordinator.settings s,
  LATERAL snowid_coordinator.lease_acquire_v1('00000000-0000-4000-8000-0000000000a1', 'old-node',
	s.timestamp_bits, s.worker_bits, s.region_bits, s.sequence_bits, s.epoch_ms,
	NULL, snowid_coordinator.now_ms()) a});
like($v1, qr/^granted \d+$/, 'protocol 1: grant');
my ($v1w) = $v1 =~ /(\d+)$/;
is(q1(qq{SELECT status FROM snowid_coordinator.lease_renew_v1('00000000-0000-4000-8000-0000000000a1', $v1w, snowid_coordinator.now_ms())}),
	'renewed', 'protocol 1: renewal');
is(q1(qq{SELECT status FROM snowid_coordinator.lease_release_v1('00000000-0000-4000-8000-0000000000a1', $v1w, snowid_coordinator.now_ms())}),
	'released', 'protocol 1: release');
$coord->stop;

# A 1.1 node against a 1.0 coordinator.
my $old = PostgreSQL::Test::Cluster->new('coord_10');
$old->init;
$old->start;
$old->safe_psql('postgres', q{
CREATE EXTENSION snowid_coordinator VERSION '1.0';
SELECT snowid_coordinator.initialize(lease_time => '6s', safety_period => '2s',
	lease_margin => '1s', single_server => true);
UPDATE snowid_coordinator.settings SET fenced_until = now();
CREATE ROLE snowid_node LOGIN;
GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_node;
GRANT EXECUTE ON FUNCTION snowid_coordinator.lease_acquire_v1,
	snowid_coordinator.lease_renew_v1, snowid_coordinator.lease_release_v1 TO snowid_node;
});
my $node = snowid_remote_node('new_node', $old);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(poll_until($node,
	q{SELECT state = 'coordinator_error' AND detail LIKE '%does not speak lease protocol version 2%ALTER EXTENSION snowid_coordinator UPDATE%' FROM snowid_status()},
	't', 30), 'a 1.1 node refuses a 1.0 coordinator, saying what to do');
my ($sqlstate) = psql_error($node, 'postgres', 'SELECT snowid_nextval()');
is($sqlstate, '57P03', 'and does not generate');
$old->safe_psql('postgres', q{
ALTER EXTENSION snowid_coordinator UPDATE;
GRANT EXECUTE ON FUNCTION snowid_coordinator.lease_acquire_v2,
	snowid_coordinator.lease_renew_v2 TO snowid_node;
});
ok(wait_for_state($node, 'active', 30), 'once the coordinator is updated, the node generates');
$node->stop;
$old->stop;
done_testing();
