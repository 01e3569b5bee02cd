# Logical replication fan-in (issue 7): two nodes, each with its own lease
# from one remote coordinator, publish their `orders` table; a third
# server subscribes to both into one table, once with text subscriptions
# (database fanin_text) and once with binary = true (database fanin_bin,
# the type's send/receive functions), both at the same time.  Under
# concurrent inserts on both nodes every row arrives, with the same
# contents, and no primary key ever conflicts: no apply or sync error, no
# ERROR in the subscriber's log.  The subscriber installs snowid without
# preloading it: a table of snowids needs only the type.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use SnowidTest;

my $started = Time::HiRes::time();

my $table = q{
CREATE TABLE orders (
	id		snowid PRIMARY KEY DEFAULT snowid_nextval(),
	origin	text NOT NULL,
	amount	int NOT NULL,
	note	text)};

my $coord = snowid_coordinator_node('coord');
my @nodes;
for my $i (1, 2)
{
	my $node = snowid_remote_node("node$i", $coord,
		allows_streaming => 1,    # wal senders; wal_level is raised below
		conf => "wal_level = logical\nlog_min_messages = warning\n");
	$node->start;
	$node->safe_psql('postgres', "CREATE EXTENSION snowid; $table;");
	$node->safe_psql('postgres', 'CREATE PUBLICATION orders_pub FOR TABLE orders');
	push @nodes, $node;
}
for my $node (@nodes)
{
	ok(wait_for_state($node, 'active'), $node->name . ' holds a lease');
	# Rows from before the subscriptions: the initial table copy.
	$node->safe_psql('postgres', sprintf(q{
INSERT INTO orders (origin, amount) SELECT '%s', g FROM generate_series(1, 500) g},
		$node->name));
}
my @workers =
  map { $_->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()') } @nodes;
isnt($workers[0], $workers[1], "the nodes lease different worker ids (@workers)");

# ---- the subscriber: snowid installed, not preloaded ----
my $sub = PostgreSQL::Test::Cluster->new('sub');
$sub->init;
$sub->append_conf('postgresql.conf', q{
max_logical_replication_workers = 8
max_worker_processes = 16
log_min_messages = warning
});
$sub->start;
my %binary = (fanin_text => 'false', fanin_bin => 'true');
for my $db (sort keys %binary)
{
	$sub->safe_psql('postgres', "CREATE DATABASE $db");
	$sub->safe_psql($db, "CREATE EXTENSION snowid; $table;");
	for my $node (@nodes)
	{
		my $subname = ($db eq 'fanin_bin' ? 'bin_' : 'text_') . $node->name;
		my $conn = sprintf('host=%s port=%d dbname=postgres', $node->host, $node->port);
		$sub->safe_psql($db, qq{
CREATE SUBSCRIPTION $subname CONNECTION '$conn' PUBLICATION orders_pub
	WITH (binary = $binary{$db})});
	}
}
for my $db (sort keys %binary)
{
	$sub->wait_for_subscription_sync(undef, undef, $db);
}
is( $sub->safe_psql('postgres',
		q{SELECT string_agg(subname || '=' || subbinary, ' ' ORDER BY subname) FROM pg_subscription}),
	'bin_node1=true bin_node2=true text_node1=false text_node2=false',
	'two text and two binary subscriptions');
# Binary subscriptions carry a column in its type's binary form when the
# type has send and receive functions, as snowid does.
is( $sub->safe_psql('fanin_bin',
		q{SELECT typsend || ' ' || typreceive FROM pg_type WHERE oid = 'snowid'::regtype}),
	'snowid_send snowid_recv', 'snowid has binary send and receive functions');
for my $db (sort keys %binary)
{
	is($sub->safe_psql($db, 'SELECT count(*) FROM orders'),
		'1000', "$db: the initial copy brought both nodes' rows");
}

# ---- concurrent inserts on both nodes (bounded pgbench) ----
my @runs;
for my $node (@nodes)
{
	my $name   = $node->name;
	my $script = $node->basedir . '/insert.sql';
	open my $fh, '>', $script or die "could not write $script: $!";
	print $fh qq{\\set amount random(1, 1000)
INSERT INTO orders (origin, amount) VALUES ('$name', :amount);
INSERT INTO orders (id, origin, amount) SELECT snowid_generate(10), '$name', :amount;
};
	close $fh;
	my %run = (node => $node, out => '', err => '');
	$run{h} = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '1', '-t', '800', '-f', $script,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$run{out}, '2>', \$run{err});
	push @runs, \%run;
}
for my $run (@runs)
{
	ok($run->{h}->finish, $run->{node}->name . ': pgbench finished without error')
	  or diag $run->{err};
}
# Updates and deletes find their rows by the snowid primary key.
for my $node (@nodes)
{
	$node->safe_psql('postgres', q{
UPDATE orders SET note = 'updated', amount = amount + 1 WHERE id::bigint % 7 = 0;
DELETE FROM orders WHERE id::bigint % 11 = 0;
});
}

my %expected;    # per origin: count and digest of all rows
my $digest = q{count(*) || ' ' || md5(string_agg(o::text, ',' ORDER BY id))};
for my $node (@nodes)
{
	my ($count) = $node->safe_psql('postgres', 'SELECT count(*) FROM orders');
	cmp_ok($count, '>', 15000, $node->name . ": $count rows after the load");
	$expected{ $node->name } =
	  $node->safe_psql('postgres', "SELECT $digest FROM orders o");
	is( $node->safe_psql('postgres',
			'SELECT count(DISTINCT snowid_worker(id)) FROM orders'),
		'1', $node->name . ': all its ids carry its one worker id');
}
my $total = 0;
$total += (split / /, $expected{$_})[0] for keys %expected;

# ---- every row arrives, in both subscriber databases ----
for my $node (@nodes)
{
	$node->wait_for_catchup($_ . $node->name) for ('text_', 'bin_');
}
for my $db (sort keys %binary)
{
	ok(poll_until_db($sub, $db, 'SELECT count(*) FROM orders', $total, 60),
		"$db: all $total rows arrived");
	for my $node (@nodes)
	{
		my $origin = $node->name;
		is( $sub->safe_psql($db,
				"SELECT $digest FROM orders o WHERE origin = '$origin'"),
			$expected{$origin},
			"$db: $origin\'s rows arrived with the same contents");
	}
	is( $sub->safe_psql($db, q{
SELECT string_agg(origin || ':' || w, ' ' ORDER BY origin) FROM (
	SELECT origin, string_agg(DISTINCT snowid_worker(id)::text, ',') AS w
	  FROM orders GROUP BY origin) s}),
		"node1:$workers[0] node2:$workers[1]",
		"$db: each origin's ids carry its node's worker id");
}

is( $sub->safe_psql('postgres', q{
SELECT string_agg(subname || ':' || apply_error_count || '/' || sync_error_count, ' ' ORDER BY subname)
  FROM pg_stat_subscription_stats}),
	'bin_node1:0/0 bin_node2:0/0 text_node1:0/0 text_node2:0/0',
	'no apply or sync error on any subscription');
my $log = slurp_file($sub->logfile);
unlike($log, qr/duplicate key|conflict/i, 'no primary key conflict in the subscriber log');
my @errors = $log =~ /^.*\b(?:ERROR|FATAL|PANIC):.*$/mg;
is(scalar(@errors), 0, 'no ERROR in the subscriber log') or diag join("\n", @errors);

$sub->stop;
$_->stop for @nodes;
$coord->stop;
note sprintf('051 took %.1f s', Time::HiRes::time() - $started);
done_testing();

# Run $sql in $db every 0.1 s until it prints $expected, for at most
# $timeout seconds.
sub poll_until_db
{
	my ($node, $db, $sql, $expected, $timeout) = @_;
	my $deadline = Time::HiRes::time() + $timeout;
	my $out = '';
	while (Time::HiRes::time() < $deadline)
	{
		my ($ret, $o) = $node->psql($db, $sql);
		$out = $o;
		return 1 if $ret == 0 && $out eq $expected;
		Time::HiRes::usleep(100_000);
	}
	note "$db: last got $out, expected $expected";
	return 0;
}
