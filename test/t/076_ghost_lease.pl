# Ghost leases.  A grant whose answer the keeper gave up on may still
# commit at the coordinator (here its commit waits for a paused
# synchronous standby past the keeper's timeout).  The keeper asks again
# with the same token until it gets a grant, and a grant is idempotent per
# token, so the node never holds two worker ids.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $coord = snowid_coordinator_node('coord_ghost', allows_streaming => 1,
	single_server => 0);
$coord->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby_ghost');
$standby->init_from_backup($coord, 'b', has_streaming => 1);
$standby->start;
$coord->append_conf('postgresql.conf', "synchronous_standby_names = 'standby_ghost'\n");
$coord->reload;
ok(poll_until($coord,
	q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'}),
	'the coordinator has a synchronous standby');

# Pause the standby: every commit at the coordinator now waits.
signal_server($standby, 'STOP');
my $node = snowid_remote_node('ghost_node', $coord);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
# The keeper's calls time out (1.2 s) again and again meanwhile.
ok(poll_until($node,
	q{SELECT state = 'coordinator_error' FROM snowid_status()}, 't', 30),
	'while commits hang the keeper gets no answer in time');
sleep 4;
signal_server($standby, 'CONT');

ok(wait_for_state($node, 'active', 40), 'the node gets a lease once commits go through');
my $w = $node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
is($coord->safe_psql('postgres', q{
SELECT count(*) FROM snowid_coordinator.worker_leases
 WHERE node_name = 'ghost_node' AND state <> 'free'}), '1',
	"the node holds one worker id ($w), no ghost beside it");
is($coord->safe_psql('postgres', q{
SELECT count(DISTINCT owner) FROM snowid_coordinator.leases WHERE owner IS NOT NULL}), '1',
	'one owner token in the pool');
note 'events: ' . $coord->safe_psql('postgres',
	q{SELECT string_agg(event || coalesce(' ' || worker_id, '') || coalesce(': ' || detail, ''), E'\n' ORDER BY event_id) FROM snowid_coordinator.events});
ok($node->safe_psql('postgres', 'SELECT snowid_nextval() > 0'), 'and generates');

$node->stop;
$standby->stop;
$coord->stop;
done_testing();
