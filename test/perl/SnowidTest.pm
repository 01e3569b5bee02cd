# Helpers shared by snowid's TAP suites: nodes with the library preloaded
# and short leases, and waiting for a node's lease state.
package SnowidTest;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use Exporter 'import';
our @EXPORT = qw(snowid_node wait_for_state snowid_state);

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
log_min_messages = log
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

# Wait (up to $timeout seconds, default 60) until the state is $state.
sub wait_for_state
{
	my ($node, $state, $timeout) = @_;
	$timeout //= 60;
	for (my $i = 0; $i < $timeout * 10; $i++)
	{
		my ($rc, $out) = (0, '');
		$out = $node->safe_psql('postgres', 'SELECT state FROM snowid_status()')
			if eval { $node->safe_psql('postgres', 'SELECT 1'); 1 };
		return 1 if $out eq $state;
		select(undef, undef, undef, 0.1);
	}
	diag("node " . $node->name . " did not reach state $state; it is "
		  . snowid_state($node));
	return 0;
}

1;
