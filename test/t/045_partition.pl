# Failure behaviour 5: one node partitioned from the coordinator.
#
# The pool has two worker ids (worker_bits = 1).  Node "steady" reaches
# the coordinator over its Unix socket; node "cut" over TCP through a
# socat proxy on loopback.  Both generate.  The proxy is killed (the
# listener and the forked per-connection processes, so the keeper's open
# connection breaks too): "cut" keeps generating until its lease expires
# by its own monotonic clock, then refuses (state expired, 57P03).
# Meanwhile a third node, "usurper", configured with the same node name as
# "cut" (a name is a preference, not proof of ownership), asks for a
# lease: no worker id is free until cut's lease has expired at the
# coordinator plus the safety period.  Then it gets cut's worker id, with
# a floor at or above cut's high-water mark, and all its ids lie above
# cut's.  When the proxy comes back, cut's renewal finds another owner: it
# has lost the lease and never re-grabs it.  "steady" is unaffected
# throughout, and no id is issued twice.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use SnowidTest;

my $t_start = time;
my $layout = "snowid.worker_bits = 1\nlog_min_messages = warning\n";

my $coord = snowid_coordinator_node(
	'coord',
	init => 'worker_bits => 1',
	conf => "listen_addresses = '127.0.0.1'\n",
	no_wait => 1);
my $proxy_port = PostgreSQL::Test::Cluster::get_free_port();
my $proxy_log = $coord->basedir . '/socat.log';
my $proxy = start_tcp_proxy($proxy_port, $coord->port, $proxy_log);

my $steady = snowid_remote_node('steady', $coord, conf => $layout);
my $cut = snowid_remote_node(
	'cut', $coord,
	conninfo => "host=127.0.0.1 port=$proxy_port dbname=postgres user=snowid_node",
	conf => $layout);
my $usurper = snowid_remote_node('usurper', $coord,
	conf => $layout . "snowid.node_name = 'cut'\n");
foreach my $node ($steady, $cut)
{
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	create_id_tables($node);
}
ok(wait_until_unfenced($coord), 'the coordinator\'s initial fence is over');
ok(wait_for_state($steady, 'active', 30), 'steady holds a lease');
ok(wait_for_state($cut, 'active', 30), 'cut holds a lease (through the proxy)');
like($cut->safe_psql('postgres', 'SELECT coordinator FROM snowid_status()'),
	qr/host=127.0.0.1 port=$proxy_port/, 'cut reaches the coordinator through the proxy');
my $w = $cut->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
isnt($steady->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()'),
	$w, 'distinct worker ids');
is($coord->safe_psql('postgres', 'SELECT free FROM snowid_coordinator.worker_pool'),
	'0', 'the pool is full');

my $g_steady = start_generator($steady, 'steady', seconds => 120);
my $g_cut = start_generator($cut, 'cut', seconds => 120);
ok(wait_for_ids($steady, 'steady', 1000), 'steady generates');
ok(wait_for_ids($cut, 'cut', 1000), 'cut generates');
# At least one renewal through the proxy before the cut.
ok(poll_until($cut, 'SELECT lease_renewals >= 1 FROM snowid_stats', 't', 10),
	'cut renewed its lease through the proxy');

# ---- cut the node off ----
my @killed = stop_tcp_proxy($proxy);
my $t_cut = time;
note 'proxy killed: pids ' . join(' ', @killed);
my $cut_at = $coord->safe_psql('postgres', 'SELECT now()');

# The usurper starts now and keeps asking for a lease.
$usurper->start;
$usurper->safe_psql('postgres', 'CREATE EXTENSION snowid');
create_id_tables($usurper);

# Watch the worker id at the coordinator, and both nodes, every 0.1 s until
# the usurper holds a lease.  Until the lease is granted again (its
# acquired_at changes) the row is cut's lease as the coordinator has it.
my $lease_sql = qq{
SELECT state, expires_at, round(extract(epoch FROM high_water) * 1000)::bigint, acquired_at
FROM snowid_coordinator.worker_leases WHERE worker_id = $w};
my (undef, $old_expires, $old_high_water, $old_acquired) =
  split /\|/, $coord->safe_psql('postgres', $lease_sql);
my (%seen_coord, %seen_usurper, %seen_cut);
my $deadline = time + 40;
while (time < $deadline)
{
	my ($state, $expires, $hw, $acquired) =
	  split /\|/, $coord->safe_psql('postgres', $lease_sql);
	my $regranted = $acquired ne $old_acquired;
	my $u = snowid_state($usurper);
	my $c = snowid_state($cut);
	$seen_usurper{$u} //= time - $t_cut;
	$seen_cut{$c} //= time - $t_cut;
	$seen_coord{ $regranted ? "$state again" : $state } //= time - $t_cut;
	($old_expires, $old_high_water) = ($expires, $hw) unless $regranted;
	last if $u eq 'active';
	sleep 0.1;
}
my $fmt = sub {
	my $h = shift;
	join(', ', map { sprintf('%s at %.1f s', $_, $h->{$_}) } sort { $h->{$a} <=> $h->{$b} } keys %$h);
};
note 'coordinator saw worker id ' . $w . ': ' . $fmt->(\%seen_coord);
note 'cut was: ' . $fmt->(\%seen_cut);
note 'usurper was: ' . $fmt->(\%seen_usurper);

ok(exists $seen_usurper{active}, 'the usurper got a lease in the end');
ok(exists $seen_usurper{no_free_worker},
	'the usurper was refused (no free worker) while the lease was held or cooling down');
ok(exists $seen_coord{held} && exists $seen_coord{cooling_down},
	'the coordinator showed the worker id held, then cooling down');
ok(exists $seen_cut{expired}, 'cut noticed the expiry by itself');
cmp_ok($seen_cut{expired} // 99, '<=', 6.5,
	'cut stopped within a lease of the cut');
cmp_ok($seen_coord{cooling_down} // 0, '>=', $seen_cut{expired} // 99,
	'cut expired locally before the coordinator began the cooling down')
  if exists $seen_coord{cooling_down};

# ---- the grant came after expiry + safety, above the old high-water mark ----
is($usurper->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()'),
	$w, 'the usurper has cut\'s worker id (the only one)');
my ($acquired_ok, $acquired_late) = split /\|/, $coord->safe_psql(
	'postgres', qq{
SELECT acquired_at >= '$old_expires'::timestamptz + interval '2 s',
	   acquired_at - ('$old_expires'::timestamptz + interval '2 s')
FROM snowid_coordinator.worker_leases WHERE worker_id = $w});
is($acquired_ok, 't',
	"granted again only after expiry + safety ($old_expires + 2 s; $acquired_late later)");
is( $coord->safe_psql(
		'postgres', qq{
SELECT count(*) FROM snowid_coordinator.events
WHERE event = 'grant' AND worker_id = $w AND at > '$cut_at'
  AND at < '$old_expires'::timestamptz + interval '2 s'}),
	'0',
	'no grant of that worker id between the cut and expiry + safety');
is( $coord->safe_psql(
		'postgres', qq{
SELECT count(*) FROM snowid_coordinator.events
WHERE event = 'grant' AND worker_id = $w AND at > '$cut_at'}),
	'1',
	'exactly one grant of it since the cut');

my $floor_ms = $usurper->safe_psql('postgres',
	'SELECT round(extract(epoch FROM floor) * 1000)::bigint FROM snowid_status()');
cmp_ok($floor_ms, '>=', $old_high_water,
	"the usurper's floor ($floor_ms) is at or above cut's high-water mark ($old_high_water)");
my $cut_max_ms = $cut->safe_psql('postgres',
	'SELECT round(extract(epoch FROM snowid_timestamp(max(id))) * 1000)::bigint FROM snowid_gen_ids');
cmp_ok($cut_max_ms, '<=', $old_high_water,
	"cut issued nothing above its high-water mark ($cut_max_ms <= $old_high_water)");

my $g_usurper = start_generator($usurper, 'usurper', seconds => 120);
ok(wait_for_ids($usurper, 'usurper', 1000), 'the usurper generates');

# ---- cut refuses; then the network comes back ----
my ($state, $message) = psql_error($cut, 'postgres', 'SELECT snowid_nextval()');
is($state, '57P03', 'cut refuses with 57P03 while partitioned');
like($message, qr/expired/, "cut says its lease expired ($message)");
my $refused_before = $cut->safe_psql('postgres',
	"SELECT count(*) FROM snowid_gen_errors WHERE phase = 'cut'");
cmp_ok($refused_before, '>', 0, "cut's generator was refused ($refused_before rounds)");

$proxy = start_tcp_proxy($proxy_port, $coord->port, $proxy_log);
ok(poll_until($cut, 'SELECT lease_losses >= 1 FROM snowid_stats', 't', 15),
	'back on the network, cut learns that it lost the lease');
ok( poll_until(
		$cut, q{SELECT state IN ('lost', 'no_free_worker') FROM snowid_status()},
		't', 10),
	'cut does not get a worker id back (none is free)');
sleep 2.5;    # a few more attempts by cut's keeper
is(snowid_state($cut), 'no_free_worker', 'cut keeps being refused');
is( $coord->safe_psql(
		'postgres',
		"SELECT count(*) >= 1 FROM snowid_coordinator.events WHERE event = 'renewal_refused' AND worker_id = $w"
	),
	't',
	'the coordinator refused cut\'s renewal');
is($usurper->safe_psql('postgres', 'SELECT state FROM snowid_status()'),
	'active', 'the usurper keeps its lease');
is( $coord->safe_psql(
		'postgres', "SELECT count(*) FROM snowid_coordinator.events WHERE event = 'grant' AND at > '$cut_at'"),
	'1',
	'nothing else was granted');

# ---- steady was never disturbed; no duplicates ----
is(stop_generator($_->[0], $_->[1]), 0, $_->[0]->name . ': generator ran to the end')
  for ([ $steady, $g_steady ], [ $cut, $g_cut ], [ $usurper, $g_usurper ]);
is($steady->safe_psql('postgres', 'SELECT count(*) FROM snowid_gen_errors'),
	'0', 'steady was never refused');
ok( wait_for_ids($steady, 'steady', 1, $cut_at),
	'steady generated while cut was partitioned');
note 'cut was refused with: ' . $cut->safe_psql('postgres',
	q{SELECT string_agg(n || ' x ' || sqlstate || ' ' || message, '; ')
	  FROM (SELECT sqlstate, regexp_replace(message, '[0-9]+', 'N', 'g') AS message, count(*) AS n
			  FROM snowid_gen_errors GROUP BY 1, 2) e});
is( $cut->safe_psql(
		'postgres', "SELECT count(*) FROM snowid_gen_errors WHERE sqlstate NOT IN ('57P03', '53400')"),
	'0',
	'cut was refused only for its lease (57P03) or, after the loss, for want of a free worker id (53400)');
is( $usurper->safe_psql(
		'postgres', "SELECT count(*) FROM snowid_gen_errors"),
	'0',
	'the usurper was never refused');

my $ids = cluster_ids([ $steady, $cut, $usurper ]);
is(count_duplicates($ids), 0, scalar(@$ids) . ' ids, none issued twice');
my $runs = worker_runs($ids);
is( join(' ', map { "$_->[0]" } @{ $runs->{$w} }),
	'cut usurper',
	"worker id $w: all of cut's ids, then all of the usurper's");

$_->stop for ($steady, $cut, $usurper);
stop_tcp_proxy($proxy);
$coord->stop;
note sprintf('045_partition took %.1f s', time - $t_start);
done_testing();
