# Failure behaviour 1: a coordinator and three nodes under concurrent
# insert load.  Distinct worker ids; all ids from all nodes unique; each
# node's ids increasing per lease.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $coord = snowid_coordinator_node('coord');
# node1 keeps a password in a passfile (a password in the conninfo itself
# is refused: 071_coordinator_password.pl): it must never be shown.
my $passfile = PostgreSQL::Test::Utils::tempdir() . '/node1.pgpass';
{
	open my $fh, '>', $passfile or die "could not write $passfile: $!";
	print $fh "*:*:*:snowid_node:sekrit-pw-123\n";
	close $fh;
	chmod 0600, $passfile;
}
my @nodes;
foreach my $i (1 .. 3)
{
	my $node = snowid_remote_node("node$i", $coord,
		$i == 1 ? (conninfo => coordinator_conninfo($coord) . " passfile=$passfile") : ());
	$node->start;
	$node->safe_psql('postgres', q{
CREATE EXTENSION snowid;
CREATE TABLE orders (id snowid PRIMARY KEY DEFAULT snowid_nextval(),
	seq bigserial, note text);
});
	push @nodes, $node;
}
foreach my $node (@nodes)
{
	ok(wait_for_state($node, 'active'), $node->name . ' holds a lease');
	unlike($node->safe_psql('postgres', 'SELECT coordinator FROM snowid_status()'),
		qr/password|sekrit/, $node->name . ': status shows no password');
}

my %workers = map {
	$_->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()') => 1
} @nodes;
is(scalar(keys %workers), 3, 'three distinct worker ids');
is($coord->safe_psql('postgres',
		"SELECT held FROM snowid_coordinator.worker_pool"), '3',
	'the coordinator\'s pool shows three held');

# Concurrent inserts on all three nodes at once (pgbench, bounded).
my $script = $nodes[0]->basedir . '/insert.sql';
open(my $fh, '>', $script) or die;
print $fh "INSERT INTO orders (note) VALUES ('x');\n";
close $fh;
my @runs;
foreach my $node (@nodes)
{
	push @runs, IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '1', '-t', '1500', '-f', $script,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \my $out, '2>', \my $err);
}
ok($_->finish, 'pgbench finished without error') for @runs;

my %seen;
my $dups = 0;
my $total = 0;
foreach my $node (@nodes)
{
	my $ids = $node->safe_psql('postgres', 'SELECT id FROM orders');
	foreach my $id (split /\n/, $ids)
	{
		$dups++ if $seen{$id}++;
		$total++;
	}
	is($node->safe_psql('postgres', 'SELECT count(*) FROM orders'), '3000',
		$node->name . ': 3000 rows');
	# Ids in commit order per session are not comparable across sessions,
	# but ids of one lease decode to one worker id.
	is($node->safe_psql('postgres', 'SELECT count(DISTINCT snowid_worker(id)) FROM orders'),
		'1', $node->name . ': one worker id');
}
is($total, 9000, '9000 ids in all');
is($dups, 0, 'no id issued twice across the cluster');

# Increasing per lease: a single session's ids follow its call order.
foreach my $node (@nodes)
{
	is($node->safe_psql('postgres', q{
SELECT count(*) FROM (
	SELECT id, lag(id) OVER (ORDER BY ord) AS prev
	  FROM snowid_generate(20000) WITH ORDINALITY AS g(id, ord)) s
 WHERE id <= prev}), '0', $node->name . ': ids increase in call order');
}

# The password never reaches the log or an error, even while the
# coordinator is unreachable (the error then quotes libpq's message).
$coord->stop;
ok(wait_for_state($nodes[0], 'expired', 30), 'node1 expires while the coordinator is down');
my ($rc, $out, $err) = $nodes[0]->psql('postgres', 'SELECT snowid_nextval()');
like($err, qr/coordinator unreachable/, 'the error names the coordinator as unreachable');
unlike($err, qr/sekrit/, 'the error shows no password');
unlike($nodes[0]->safe_psql('postgres', 'SELECT detail FROM snowid_status()'),
	qr/sekrit/, 'the status detail shows no password');
unlike(slurp_file($nodes[0]->logfile), qr/sekrit/, 'the log shows no password');
$coord->start;
ok(wait_for_state($nodes[0], 'active', 30), 'node1 resumes when the coordinator returns');

$_->stop for @nodes;
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM snowid_coordinator.events WHERE event = 'release'"),
	'3', 'each node released its lease on shutdown');
$coord->stop;
done_testing();
