# Local mode with a synchronous standby named but absent: the keeper's
# lease transactions force only a local flush (its leases live in the
# node's own database, and the identity fence covers promoted copies), so
# it never waits in the synchronous replication wait, keeps its lease, and
# a fast shutdown completes in seconds.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SnowidTest;

# (streaming allowed: with max_wal_senders = 0 no commit ever waits)
my $node = snowid_node('syncwait', allows_streaming => 1);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'active');

# Name a synchronous standby that does not exist.
$node->append_conf('postgresql.conf', "synchronous_standby_names = 'nobody'\n");
$node->reload;
my $renewals = $node->safe_psql('postgres', 'SELECT lease_renewals FROM snowid_stats');
ok(poll_until($node,
	"SELECT lease_renewals >= $renewals + 2 FROM snowid_stats", 't', 20),
	'renewals go on with an absent synchronous standby');
is(snowid_state($node), 'active', 'still active');
ok($node->safe_psql('postgres', 'SELECT count(*) = 100 FROM snowid_generate(100)'),
	'ids are generated');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_activity
 WHERE backend_type = 'snowid lease keeper' AND wait_event = 'SyncRep'}), '0',
	'the keeper is not waiting for synchronous replication');

# A fast stop within 20 s.
my $t0 = time;
my $stopped;
{
	local $ENV{PGCTLTIMEOUT} = 20;
	$stopped = $node->stop('fast', fail_ok => 1);
}
my $took = time - $t0;
ok($stopped, sprintf('pg_ctl -m fast stop completed (%.1f s)', $took));
$node->stop('immediate', fail_ok => 1) unless $stopped;
like(slurp_file($node->logfile), qr/released worker id/,
	'the keeper released its lease on the way out');
done_testing();
