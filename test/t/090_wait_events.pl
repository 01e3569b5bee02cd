# Named wait events (PostgreSQL 17 on: WaitEventExtensionNew).
#
#  (a) pg_wait_events lists snowid's four events, type Extension, as soon
#      as the lease keeper has waited once;
#  (b) pg_stat_activity shows the keeper (local mode) waiting on
#      SnowidLeaseKeeper between its rounds;
#  (c) a remote-mode keeper whose renewal the coordinator holds up (a lock
#      on the lease table) shows SnowidCoordinatorSocket;
#  (d) a session generating at the cap shows SnowidSequenceExhausted;
#  (e) a session whose clock was stepped back by 0.8 s (less than
#      snowid.max_clock_wait) shows SnowidClockBehind while it waits.
# Each is seen by sampling pg_stat_activity from another session until the
# event shows up or a generous deadline passes.  On 15 and 16 every wait is
# the generic "Extension": the test skips there.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time sleep);

use SnowidTest;

my $node = snowid_node(
	'waits', conf => "snowid.max_clock_wait = '1s'\n");
plan skip_all => 'named wait events need PostgreSQL 17 or later (this is '
  . $node->pg_version . ')'
  unless $node->pg_version >= 17;
plan skip_all => 'libfaketime is not installed (Debian package libfaketime)'
  unless faketime_lib();

my $clock_file = $node->basedir . '/faketime.rc';
set_clock_offset($clock_file, '+0');
start_with_faketime($node, $clock_file);
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'node holds a lease');

# ---- (a) the events exist ----
my $events = $node->safe_psql('postgres', q{
SELECT string_agg(name, ',' ORDER BY name) FROM pg_wait_events
WHERE type = 'Extension' AND name LIKE 'Snowid%'});
is( $events,
	'SnowidClockBehind,SnowidCoordinatorSocket,SnowidLeaseKeeper,SnowidSequenceExhausted',
	'pg_wait_events lists the four snowid events');
my $descr = $node->safe_psql('postgres', q{
SELECT description FROM pg_wait_events WHERE name = 'SnowidLeaseKeeper'});
like($descr, qr/extension/i, "described as an extension's event: $descr");

# Sample pg_stat_activity for $pid_sql's process until its wait_event is
# $event (at most $timeout s).  Returns what was seen last.
sub wait_event_seen
{
	my ($on, $pid_sql, $event, $timeout) = @_;
	my $deadline = time + $timeout;
	my $seen = '';
	while (time < $deadline)
	{
		$seen = $on->safe_psql('postgres', qq{
SELECT coalesce(wait_event_type, '') || ':' || coalesce(wait_event, '')
FROM pg_stat_activity WHERE pid = ($pid_sql)});
		return $seen if $seen eq "Extension:$event";
		sleep 0.01;
	}
	return $seen;
}

# ---- (b) the keeper between rounds ----
my $keeper = 'SELECT keeper_pid FROM snowid_status()';
is(wait_event_seen($node, $keeper, 'SnowidLeaseKeeper', 30),
	'Extension:SnowidLeaseKeeper',
	'pg_stat_activity: the keeper waits on SnowidLeaseKeeper');
is( $node->safe_psql('postgres',
		"SELECT backend_type FROM pg_stat_activity WHERE pid = ($keeper)"),
	'snowid lease keeper',
	'and is listed as "snowid lease keeper"');

# ---- (d) a session at the cap ----
# snowid_generate() reserves whole milliseconds (4096 ids each), so it
# spends most of its time waiting for the next one.
my ($out, $err) = ('', '');
my $gen = IPC::Run::start(
	[
		'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
		q{SET application_name = 'capped';
SELECT count(*) FROM generate_series(1, 40), LATERAL snowid_generate(1000000)}
	],
	'>', \$out, '2>', \$err);
my $capped = q{SELECT pid FROM pg_stat_activity WHERE application_name = 'capped'};
is(wait_event_seen($node, $capped, 'SnowidSequenceExhausted', 60),
	'Extension:SnowidSequenceExhausted',
	'a session at the cap waits on SnowidSequenceExhausted');
$node->safe_psql('postgres',
	"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'capped'");
$gen->finish;

# ---- (e) a session behind its own last id after a clock step ----
# The backend issues an id, steps the clock back 0.8 s (less than
# snowid.max_clock_wait, 1 s), and asks for the next: it waits until the
# clock is past the last used timestamp.
$node->safe_psql('postgres', q{
CREATE FUNCTION step_and_generate(p_file text) RETURNS snowid
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM snowid_nextval();
	EXECUTE format('COPY (SELECT %L) TO %L', '-0.8', p_file);
	RETURN snowid_nextval();
END $$;
});
($out, $err) = ('', '');
my $stepper = IPC::Run::start(
	[
		'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
		qq{SET application_name = 'stepper';
SELECT step_and_generate('$clock_file')}
	],
	'>', \$out, '2>', \$err);
my $stepping = q{SELECT pid FROM pg_stat_activity WHERE application_name = 'stepper'};
is(wait_event_seen($node, $stepping, 'SnowidClockBehind', 30),
	'Extension:SnowidClockBehind',
	'a session behind the clock step waits on SnowidClockBehind');
$stepper->finish;
like($out, qr/^\d+$/, 'and gets its id once the clock has caught up')
  or diag $err;
set_clock_offset($clock_file, '+0');
$node->stop;

# ---- (c) a remote keeper waiting for its coordinator ----
my $coordinator = snowid_coordinator_node('waits_coordinator');
my $remote = snowid_remote_node('waits_remote', $coordinator);
$remote->start;
$remote->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($remote, 'active'), 'remote node holds a lease');

# Hold up every lease call at the coordinator: the keeper's renewal (every
# third of the 6 s lease) then waits on its socket.
my ($lock_out, $lock_err, $lock_in) = ('', '', '');
my $locker = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $coordinator->connstr('postgres') ],
	'<', \$lock_in, '>', \$lock_out, '2>', \$lock_err);
$lock_in = "BEGIN;\nLOCK TABLE snowid_coordinator.leases IN ACCESS EXCLUSIVE MODE;\n"
  . "SELECT 'locked';\n";
$locker->pump until $lock_out =~ /locked/ || !$locker->pumpable;
is(wait_event_seen($remote, $keeper, 'SnowidCoordinatorSocket', 30),
	'Extension:SnowidCoordinatorSocket',
	'a remote keeper waits on SnowidCoordinatorSocket while the coordinator is held up');
$lock_in .= "ROLLBACK;\n\\q\n";
$locker->finish;
ok(wait_for_state($remote, 'active'), 'remote node is active again');

$remote->stop;
$coordinator->stop;
done_testing();
