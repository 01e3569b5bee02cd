# Nodes and clusters for snowid's TAP suites: a node with the library
# preloaded and short leases, a remote coordinator and the nodes that
# lease from it, and waiting for what a node or coordinator reports.
#
# Waiting.  Every wait is poll_query_until() of PostgreSQL::Test::Cluster
# (a query every 0.1 s until it prints what is expected), bounded by
# $PostgreSQL::Test::Utils::timeout_default: 180 s unless the environment
# sets PG_TEST_TIMEOUT_DEFAULT, which a slow machine raises.  A caller may
# still pass a bound of its own (a retry loop that acts again after a few
# seconds does); it is raised in proportion when PG_TEST_TIMEOUT_DEFAULT
# is above 180, never lowered.  See wait_seconds().
#
# SnowidTest re-exports everything here; tests say "use SnowidTest;".
package SnowidTest::Node;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use Exporter 'import';
our @EXPORT = qw(snowid_node snowid_state wait_for_state wait_until_up
  poll_until psql_error set_preload log_offset
  snowid_coordinator_node coordinator_conninfo snowid_remote_node
  wait_until_unfenced probe_grant);
our @EXPORT_OK = qw(wait_seconds);

# ---- waiting ----

# How many seconds a wait may take: timeout_default, or the caller's own
# $seconds scaled up by timeout_default / 180 (never down).
sub wait_seconds
{
	my ($seconds) = @_;
	my $default = $PostgreSQL::Test::Utils::timeout_default;
	return $default unless defined $seconds;
	return $default > 180 ? $seconds * $default / 180 : $seconds;
}

# poll_query_until() for at most wait_seconds($timeout).  It wants psql's
# stderr empty, so the session's warnings and notices are kept out of it
# (a lease function may warn that the pool runs low); errors still count.
sub poll_query
{
	my ($node, $db, $sql, $expected, $timeout) = @_;
	local $PostgreSQL::Test::Utils::timeout_default = wait_seconds($timeout);
	local $ENV{PGOPTIONS} = join(' ',
		grep { defined && length } ($ENV{PGOPTIONS}, '-c client_min_messages=error'));
	return $node->poll_query_until($db, $sql, $expected);
}

# Run $sql in database postgres until it succeeds and prints $expected
# (default 't').  Returns true if it did; the optional $timeout is in
# seconds (see wait_seconds).
sub poll_until
{
	my ($node, $sql, $expected, $timeout) = @_;
	return poll_query($node, 'postgres', $sql, $expected // 't', $timeout);
}

# Wait until the node accepts connections (after a crash restart).
sub wait_until_up
{
	my ($node, $timeout) = @_;
	return poll_query($node, 'postgres', 'SELECT true', 't', $timeout);
}

# ---- one node ----

# A new, initialised (not started) node with snowid preloaded.  Leases
# are short so tests run quickly, but at least 5 s: 2 cores are slow under
# load.  Extra postgresql.conf lines come in $opts{conf}.
sub snowid_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $opts{allows_streaming} ? 1 : 0);
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'snowid'
snowid.lease_time = '6s'
snowid.safety_period = '2s'
snowid.lease_margin = '1s'
snowid.node_name = '$name'
});
	$node->append_conf('postgresql.conf', $opts{conf}) if $opts{conf};
	return $node;
}

# The node's lease state, from snowid_status() in database postgres
# (CREATE EXTENSION snowid there first).
sub snowid_state
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT state FROM snowid_status()');
}

# Wait until the node's state is $state; the optional $timeout is in
# seconds (see wait_seconds).
sub wait_for_state
{
	my ($node, $state, $timeout) = @_;
	return 1
	  if poll_query($node, 'postgres', 'SELECT state FROM snowid_status()',
		$state, $timeout);
	my $now = eval { snowid_state($node) } // '(no answer)';
	diag("node " . $node->name . " did not reach state $state; it is $now");
	return 0;
}

# Run $sql on $node (database $db) expecting an error.  Returns
# ($sqlstate, $message, $stderr); $sqlstate is '' if the statement did
# not fail.  Extra psql parameters (e.g. [ '-U', 'role' ]) in $extra.
sub psql_error
{
	my ($node, $db, $sql, $extra) = @_;
	my ($rc, $out, $err) = $node->psql(
		$db, $sql,
		on_error_stop => 1,
		extra_params => [ '-v', 'VERBOSITY=verbose', @{ $extra // [] } ]);
	return ('', '', $err) if $rc == 0;
	my ($state, $message) = $err =~ /ERROR:\s+([0-9A-Z]{5}):\s+([^\n]*)/;
	return ($state // '?', $message // '', $err);
}

# Turn the preloading of snowid on or off (takes effect at the next start).
# Off, the server has no keeper, so the coordinator's tables can be read
# as the last run left them.
sub set_preload
{
	my ($node, $on) = @_;
	$node->adjust_conf('postgresql.conf', 'shared_preload_libraries',
		$on ? "'snowid'" : "''");
	return;
}

# The current end of the node's log, for slurp_file($node->logfile, $offset).
sub log_offset
{
	my ($node) = @_;
	return -s $node->logfile;
}

# ---- clusters: a remote coordinator and nodes that lease from it ----

# A started coordinator server with snowid_coordinator installed and
# initialised (lease 6 s, safety 2 s, margin 1 s), a login role
# "snowid_node" holding only EXECUTE on the lease functions, and the fence
# a new coordinator starts with already waited out.  Options:
#   allows_streaming => 1   (to give it a standby)
#   single_server => 0|1    (default 1: no synchronous standby needed)
#   init => 'extra named arguments for initialize()', e.g. "worker_bits => 2"
#   conf => extra postgresql.conf lines
#   no_wait => 1            (do not wait out the initial fence)
sub snowid_coordinator_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $opts{allows_streaming} ? 1 : 0);
	$node->append_conf('postgresql.conf', $opts{conf}) if $opts{conf};
	$node->start;
	my $single = exists $opts{single_server} ? ($opts{single_server} ? 'true' : 'false') : 'true';
	my $extra = $opts{init} ? ", $opts{init}" : '';
	$node->safe_psql('postgres', qq{
CREATE EXTENSION snowid_coordinator;
SELECT snowid_coordinator.initialize(lease_time => '6s', safety_period => '2s',
	lease_margin => '1s', single_server => $single$extra);
CREATE ROLE snowid_node LOGIN;
GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_node;
GRANT EXECUTE ON FUNCTION snowid_coordinator.lease_acquire_v2,
	snowid_coordinator.lease_renew_v2, snowid_coordinator.lease_acquire_v1,
	snowid_coordinator.lease_renew_v1, snowid_coordinator.lease_release_v1
	TO snowid_node;
});
	# A new coordinator grants nothing for a lease plus the safety period.
	unless ($opts{no_wait})
	{
		wait_until_unfenced($node)
		  or die "coordinator $name is still fenced after "
		  . wait_seconds() . ' s';
	}
	return $node;
}

# Wait until the coordinator's fence is over, so that it grants leases
# again; the optional $timeout is in seconds (see wait_seconds).
sub wait_until_unfenced
{
	my ($coord, $timeout) = @_;
	return poll_until($coord,
		'SELECT fenced_until IS NULL OR fenced_until < now() FROM snowid_coordinator.settings',
		't', $timeout);
}

# libpq conninfo for nodes to reach one or more coordinators (multi-host,
# read-write target, as a user would configure a failover pair).
sub coordinator_conninfo
{
	my @coordinators = @_;
	my $hosts = join(',', map { $_->host } @coordinators);
	my $ports = join(',', map { $_->port } @coordinators);
	return "host=$hosts port=$ports dbname=postgres user=snowid_node "
	  . "target_session_attrs=read-write";
}

# A node (initialised, not started) that leases from the coordinator(s);
# extra postgresql.conf lines in $opts{conf}; $opts{conninfo} overrides.
sub snowid_remote_node
{
	my ($name, $coordinators, %opts) = @_;
	my @c = ref $coordinators eq 'ARRAY' ? @$coordinators : ($coordinators);
	my $conninfo = $opts{conninfo} // coordinator_conninfo(@c);
	my $conf = "snowid.coordinator = '$conninfo'\n" . ($opts{conf} // '');
	return snowid_node($name, %opts, conf => $conf);
}

# Ask the coordinator for a lease directly (as a superuser, with its own
# layout and a new token) and return the status it answers.  Use it only
# where a grant is expected to be refused: a granted probe holds a worker
# id until it expires.
sub probe_grant
{
	my ($coord, $name) = @_;
	$name //= 'probe';
	return $coord->safe_psql('postgres', qq{
SELECT a.status
  FROM snowid_coordinator.settings s,
	   LATERAL snowid_coordinator.lease_acquire_v1(gen_random_uuid(), '$name',
		s.timestamp_bits, s.worker_bits, s.region_bits, s.sequence_bits,
		s.epoch_ms, NULL, snowid_coordinator.now_ms()) a});
}

1;
