# make bench-coordinator's own arithmetic (bench/coordinator/analysis.sql),
# which turns pgbench's per-transaction logs into the figures of its
# report; no timing is asserted.
#
# (a) a renewal log whose answers are known: percentiles by nearest rank,
#     a transaction pgbench dropped (--latency-limit) counted as infinitely
#     late, the count of those slower than a limit;
# (b) a herd log: the transactions for node numbers past N, and those that
#     ended after the time limit, are left out; starts are end - latency;
# (c) the per-N figures: sustained / demand, CPU per renewal, herd time;
# (d) the real pgbench's log, dropped transactions included, parses to the
#     counts pgbench itself prints.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IPC::Run;
use List::Util qw(shuffle);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = abs_path(dirname(__FILE__) . '/../..');
my $node = PostgreSQL::Test::Cluster->new('bench_report');
$node->init;
$node->start;
$node->safe_psql('postgres', slurp_file("$root/bench/coordinator/analysis.sql"));

# Lines as bench/coordinator.sh loads them: the phase, then pgbench's
# "client_id transaction_no time script_no time_epoch time_us [lag]".
sub load_lines
{
	my @lines = @_;
	my $values = join(",\n", map { "('$_')" } @lines);
	$node->safe_psql('postgres', "INSERT INTO pgbench_line (line) VALUES $values");
	is($node->safe_psql('postgres', 'SELECT parse_lines()'), scalar(@lines),
		'parse_lines() takes every line loaded');
}

sub summary
{
	my ($args) = @_;
	return $node->safe_psql('postgres',
		"SELECT transactions, dropped, late, p50_ms, p99_ms, max_ms FROM latency_summary($args)");
}

# (a) 98 renewals of 1 .. 98 ms, in a shuffled order, and 2 dropped.
my $t = 1796126000;
my @lines = map { "renewA " . ($_ % 4) . " $_ " . ($_ * 1000) . " 0 " . ($t + $_) . " 500000 12" } 1 .. 98;
push @lines, "renewA 1 99 skipped 0 " . ($t + 99) . " 0 6000000", "renewA 2 100 skipped 0 " . ($t + 100) . " 0 6000000";
load_lines(shuffle @lines);
is(summary(q{'renewA', p_limit_ms => 90}), '100|2|8|50|Infinity|98',
	'100 renewals, 2 dropped: p50 is the 50th, p99 the 99th (a dropped one: infinite), 8 slower than 90 ms, max of the completed');

load_lines(map { "renewB 0 $_ " . ($_ * 1000) . " 0 " . ($t + $_) . " 0 0" } shuffle 1 .. 100);
is(summary(q{'renewB'}), '100|0|0|50|99|100', 'latencies 1 .. 100 ms: p50 50 ms, p99 99 ms');

# (b) A herd of 8 nodes from 3 clients: client c's k-th transaction is node
# c + 3 (k - 1); node 8 did nothing (its latency must not count), and node
# 7's grant ended after the limit.
my @herd;
for my $c (0 .. 2)
{
	for my $k (1 .. 3)
	{
		my $id = $c + 3 * ($k - 1);
		# node i < 7: (i + 1) * 10 ms, ending at t + 10 + i
		my ($us, $end) = $id == 8 ? (9000000, $t + 18) : $id == 7 ? (80000, $t + 60)
		  : (($id + 1) * 10000, $t + 10 + $id);
		push @herd, "herdA $c $k $us 0 $end 0";
	}
}
load_lines(shuffle @herd);
is(summary(qq{'herdA', 3, 8, to_timestamp($t + 30)}), '7|0|0|40|70|70',
	'herd: 7 grants counted, neither the no-op past N nor the one that ended after the limit');
is($node->safe_psql('postgres', qq{SELECT extract(epoch FROM first_start)::numeric(14,2), extract(epoch FROM last_end)::int
	FROM latency_summary('herdA', 3, 8, to_timestamp($t + 30))}),
	($t + 10 - 0.01) . "|" . ($t + 16),
	'herd: from the first grant\'s start (end - latency) to the last grant\'s end');

# (c) The per-N figures.  renewA and herdA stand for 8 nodes: demand
# 0.8/s; 98 renewals completed over 122.5 s are 1.0 of it; 49 ticks at 100
# per second over the 98 renewals are 5 ms each, 0.004 of a core; all 8
# granted (the database counted the late one too): the herd took 6.01 s.
$node->safe_psql('postgres', q{
UPDATE pgbench_tx SET phase = 'renew8' WHERE phase = 'renewA';
UPDATE pgbench_tx SET phase = 'herd8' WHERE phase = 'herdA'});
$node->safe_psql('postgres', qq{INSERT INTO run VALUES
	(8, 10, 30000, 3, 122.5, 49, 7, 14, 30, to_timestamp($t + 30), 8, 100)});
my $figures = q{
SELECT round(demand_per_s::numeric, 3), round(sustained_ratio::numeric, 3), renew_p50_ms, renew_p99_ms,
	   round(renew_p99_per_lease::numeric, 3), round(cpu_ms_per_renewal::numeric, 3),
	   round(coordinator_cores::numeric, 3), round(herd_s::numeric, 3), grant_p50_ms, grant_p99_ms,
	   renew_max_ms, renewals_dropped
  FROM run_figures};
is($node->safe_psql('postgres', $figures),
	'0.800|1.000|50|Infinity|Infinity|5.000|0.004|6.010|40|70|98|2',
	'per N: demand N / 10 s, sustained / demand, CPU per renewal, herd time');
$node->safe_psql('postgres', q{UPDATE run SET herd_granted = 5});
is($node->safe_psql('postgres', q{SELECT herd_s IS NULL, round(herd_estimate_s::numeric, 2) FROM run_figures}),
	't|6.87', 'a herd cut off by its limit has no time, only an estimate at its rate (8 / (7 / 6.01 s))');

# (d) The real pgbench, throttled far beyond what a 10 ms statement can do,
# with a latency limit: its log parses to the counts it prints.
my $dir = $node->basedir;
append_to_file("$dir/sleep.sql", "SELECT pg_sleep(0.01);\n");
my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[
		'pgbench', '-n', '-c', '2', '-j', '1', '-T', '2', '-R', '500', '-L', '15',
		'--log', "--log-prefix=$dir/plog", '-f', "$dir/sleep.sql",
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
ok($ok, 'pgbench with --rate and --latency-limit ran') or diag("$out\n$err");
my ($processed) = $out =~ /number of transactions actually processed: (\d+)/;
my ($skipped) = $out =~ /number of transactions skipped: (\d+)/;
ok(defined $processed && defined $skipped && $skipped > 0,
	"pgbench processed $processed and skipped $skipped transactions");
my @log;
for my $f (glob("$dir/plog.*"))
{
	push @log, map { "real $_" } split /\n/, slurp_file($f);
}
load_lines(@log);
my ($n, $dropped) = split /\|/, summary(q{'real'});
is($n - $dropped, $processed, 'the parsed log has the transactions pgbench processed');
is($dropped, $skipped, 'and the ones it skipped, as dropped');

$node->stop;
done_testing();
