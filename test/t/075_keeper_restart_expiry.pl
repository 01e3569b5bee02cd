# A keeper restarted while its coordinator (local mode: snowid.database)
# is blocked keeps enforcing the lease's expiry: setup fails again and
# again, and the lease still runs out on time, with the state saying so.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SnowidTest;

my $node = snowid_node('blocked');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'active');

# Block the coordinator's tables for 25 s.
my ($out, $err) = ('', '');
my $blocker = IPC::Run::start(
	[ $node->installed_command('psql'), '-XAtq', '-d', $node->connstr('postgres'), '-c',
	  q{BEGIN; LOCK TABLE snowid_coordinator.settings, snowid_coordinator.leases IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(25); COMMIT;} ],
	'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(60));
ok(poll_until($node, q{SELECT count(*) = 1 FROM pg_locks
	WHERE relation = 'snowid_coordinator.settings'::regclass AND mode = 'AccessExclusiveLock' AND granted}),
	'the coordinator is blocked');

my $old = $node->safe_psql('postgres', 'SELECT keeper_pid FROM snowid_status()');
my $t0 = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($old)");
ok(poll_until($node, "SELECT keeper_pid <> $old FROM snowid_status()", 't', 20),
	'the keeper was restarted');

# The lease is 6 s; renewals stopped at the latest when the lock was taken.
ok(wait_for_state($node, 'expired', 15), 'the lease expires although setup keeps failing');
cmp_ok(time - $t0, '<', 12, 'on time: within the lease (6 s) and a few seconds');
my ($state, $msg) = psql_error($node, 'postgres', 'SELECT snowid_nextval()');
is($state, '57P03', 'generation is refused');

IPC::Run::finish($blocker);
ok(wait_for_state($node, 'active', 30), 'once the coordinator answers, generation resumes');
$node->stop;
done_testing();
