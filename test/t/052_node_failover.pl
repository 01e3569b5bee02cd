# Physical replication and node failover with a remote coordinator
# (issue 7).  A hot standby of a node decodes ids but cannot generate
# (25006) and holds no lease.  It is then promoted while the old primary
# keeps running and generating (split brain): the promoted node takes its
# own lease, a worker id other than the one the old primary still holds
# (they share the node name, which is only a preference), and the ids of
# both stay unique.  The local-coordinator case (the promoted node refuses
# until an operator confirms) is 021_standby.pl.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use SnowidTest;

my $started = Time::HiRes::time();

my $coord = snowid_coordinator_node('coord');
my $primary = snowid_remote_node('primary', $coord,
	allows_streaming => 1,
	conf => "log_min_messages = warning\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION snowid');
create_id_tables($primary);
ok(wait_for_state($primary, 'active'), 'primary holds a lease');
my $old_worker =
  $primary->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
generate_ids($primary, 'before backup', 500);

$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;
generate_ids($primary, 'streamed', 500);
$primary->wait_for_catchup($standby);

# ---- the hot standby: decoding yes, generation no ----
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby is in recovery');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM snowid_gen_ids'),
	'2000', 'standby has the primary\'s ids');
my $probe = $primary->safe_psql('postgres',
	q{SELECT max(id) FROM snowid_gen_ids WHERE phase = 'streamed'});
my $decode = "SELECT d.timestamp || ' ' || d.worker || ' ' || d.sequence || ' ' || "
  . "snowid_timestamp('$probe') || ' ' || snowid_worker('$probe') || ' ' || "
  . "snowid_sequence('$probe') || ' ' || snowid_to_base32('$probe') "
  . "FROM snowid_decode('$probe') d";
is($standby->safe_psql('postgres', $decode),
	$primary->safe_psql('postgres', $decode),
	'standby decodes a replicated id as the primary does');
is($standby->safe_psql('postgres', "SELECT snowid_worker('$probe')"),
	$old_worker, 'the replicated id carries the primary\'s worker id');
for my $call ('SELECT snowid_nextval()', 'SELECT * FROM snowid_generate(3)')
{
	my ($state, $message, $stderr) = psql_error($standby, 'postgres', $call);
	is($state, '25006', "standby: $call fails with SQLSTATE 25006")
	  or diag $stderr;
	is($message, 'cannot generate snowids during recovery',
		"standby: $call says why");
}
is( $standby->safe_psql('postgres',
		q{SELECT state || ' ' || (worker_id IS NULL) || ' ' || (keeper_pid IS NULL) FROM snowid_status()}),
	'no_lease_yet true true', 'standby: no lease, no keeper');
is( $coord->safe_psql('postgres',
		q{SELECT string_agg(worker_id || ':' || node_name, ' ') FROM snowid_coordinator.worker_leases WHERE state = 'held'}),
	"$old_worker:primary", 'the coordinator records only the primary\'s lease');

# ---- split brain: promote while the old primary keeps generating ----
my $gen_old = start_generator($primary, 'old_primary', seconds => 40, pause => 0.01);
ok(wait_for_ids($primary, 'old_primary', 500), 'old primary generates');
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'standby promoted while the old primary runs');
ok(wait_for_state($standby, 'active', 60), 'promoted node holds a lease');
my $gen_new = start_generator($standby, 'promoted', seconds => 40, pause => 0.01);

my ($new_worker, $new_name) = split /\|/,
  $standby->safe_psql('postgres', 'SELECT worker_id, node_name FROM snowid_status()');
is($new_name, 'primary', 'the promoted node has the old primary\'s node name');
isnt($new_worker, $old_worker,
	"the promoted node took another worker id ($new_worker) than the old primary\'s live one ($old_worker)");

# Both go on for more than a lease: both renew, neither loses its lease.
sleep 7;
is(snowid_state($primary), 'active', 'old primary still active after a lease');
is(snowid_state($standby), 'active', 'promoted node still active after a lease');
is( $coord->safe_psql('postgres',
		q{SELECT string_agg(worker_id || ':' || node_name, ' ' ORDER BY worker_id)
		  FROM snowid_coordinator.worker_leases WHERE state = 'held'}),
	join(' ', map { "$_:primary" } sort { $a <=> $b } ($old_worker, $new_worker)),
	'the coordinator records two held leases under the same node name');
is( $coord->safe_psql('postgres',
		q{SELECT count(*) FROM snowid_coordinator.events WHERE event = 'renewal_refused'}),
	'0', 'no renewal refused');

is(stop_generator($primary, $gen_old), 0, 'old primary\'s generator ran to the end');
is(stop_generator($standby, $gen_new), 0, 'promoted node\'s generator ran to the end');

# ---- the ids of both sides ----
my %from;
$from{old} = [ split /\n/, $primary->safe_psql('postgres', 'SELECT id FROM snowid_gen_ids') ];
$from{new} = [ split /\n/, $standby->safe_psql('postgres',
		q{SELECT id FROM snowid_gen_ids WHERE phase = 'promoted'}) ];
my $split_old = $primary->safe_psql('postgres',
	q{SELECT count(*) FROM snowid_gen_ids WHERE phase = 'old_primary'});
cmp_ok($split_old, '>=', 2000, "old primary made $split_old ids during the split");
cmp_ok(scalar @{ $from{new} }, '>=', 2000,
	'promoted node made ' . scalar(@{ $from{new} }) . ' ids during the split');
for my $side ('old', 'new')
{
	my $node = $side eq 'old' ? $primary : $standby;
	is($node->safe_psql('postgres', 'SELECT count(*) FROM snowid_gen_errors'),
		'0', "$side side: no generation refused");
}
is( $primary->safe_psql('postgres',
		q{SELECT string_agg(DISTINCT snowid_worker(id)::text, ',') FROM snowid_gen_ids WHERE phase = 'old_primary'}),
	$old_worker, 'old primary\'s split ids carry its worker id');
is( $standby->safe_psql('postgres',
		q{SELECT string_agg(DISTINCT snowid_worker(id)::text, ',') FROM snowid_gen_ids WHERE phase = 'promoted'}),
	$new_worker, 'promoted node\'s ids carry its own worker id');
my %seen;
my $dups = 0;
for my $id (@{ $from{old} }, @{ $from{new} })
{
	$dups++ if $seen{$id}++;
}
is($dups, 0,
	'no id issued twice across the old primary (' . scalar(@{ $from{old} })
	  . ') and the promoted node (' . scalar(@{ $from{new} }) . ')');

$standby->stop;
$primary->stop;
is( $coord->safe_psql('postgres',
		q{SELECT count(*) FROM snowid_coordinator.worker_leases WHERE state = 'held'}),
	'0', 'both released their leases on shutdown');
$coord->stop;
note sprintf('052 took %.1f s', Time::HiRes::time() - $started);
done_testing();
