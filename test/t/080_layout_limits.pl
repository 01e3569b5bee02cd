# The layout limits are written once in C (src/layout.h) and once in the
# coordinator's initialize(); this checks that the two, the node's setting
# bounds and the messages all agree, by the boundary values themselves.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $root = abs_path(dirname(__FILE__) . '/../..');
my $header = slurp_file("$root/src/layout.h");
my %c;
for my $name (qw(MIN_TIMESTAMP_BITS MAX_WORKER_BITS MAX_SEQUENCE_BITS))
{
	($c{$name}) = $header =~ /#define\s+SNOWID_$name\s+(\d+)/;
	ok(defined $c{$name}, "layout.h defines SNOWID_$name ($c{$name})");
}
my ($min_ts, $max_w, $max_s) = @c{qw(MIN_TIMESTAMP_BITS MAX_WORKER_BITS MAX_SEQUENCE_BITS)};

my $node = snowid_node('limits');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
is($node->safe_psql('postgres', q{SELECT min_val || '-' || max_val FROM pg_settings WHERE name = 'snowid.worker_bits'}),
	"1-$max_w", 'snowid.worker_bits takes 1 to the C limit');
is($node->safe_psql('postgres', q{SELECT min_val || '-' || max_val FROM pg_settings WHERE name = 'snowid.sequence_bits'}),
	"1-$max_s", 'snowid.sequence_bits takes 1 to the C limit');

# initialize() in a scratch database: accepts each limit, refuses one past.
$node->safe_psql('postgres', 'CREATE DATABASE scratch');
sub init_status
{
	my ($w, $s) = @_;
	my ($rc, $out, $err) = $node->psql('scratch', qq{
BEGIN;
CREATE EXTENSION snowid_coordinator;
SELECT snowid_coordinator.initialize(worker_bits => $w, sequence_bits => $s, single_server => true);
ROLLBACK;});
	return $rc == 0 ? 'ok' : ($err =~ /DETAIL:\s+(.*)/ ? $1 : $err);
}
my $s_for_max_w = 63 - $max_w - $min_ts;
is(init_status($max_w, $s_for_max_w), 'ok',
	"initialize() accepts worker_bits = $max_w with $min_ts timestamp bits");
like(init_status($max_w + 1, 1), qr/at least $min_ts are needed, with 1-$max_w worker bits, 1-$max_s sequence bits/,
	'refuses one more worker bit, and its message quotes the same limits');
is(init_status(1, $max_s), 'ok', "accepts sequence_bits = $max_s");
isnt(init_status(1, $max_s + 1), 'ok', 'refuses one more sequence bit');
is(init_status(63 - $min_ts - 12, 12), 'ok', "accepts exactly $min_ts timestamp bits");
isnt(init_status(63 - $min_ts - 11, 12), 'ok', 'refuses one fewer');
$node->stop;

# The node refuses the same boundary at start-up, quoting the C constant.
my $bad = snowid_node('limits_bad', conf => "snowid.worker_bits = $max_w\nsnowid.sequence_bits = " . (63 - $max_w - $min_ts + 1) . "\n");
ok(!$bad->start(fail_ok => 1), "a node with one timestamp bit fewer than $min_ts does not start");
like(slurp_file($bad->logfile), qr/must leave at least $min_ts timestamp bits/,
	'its message quotes the same limit');
done_testing();
