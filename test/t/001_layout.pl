# A non-default id layout, and layouts that must stop the server.
#
# The node runs with 8 worker bits (3 of them region bits), 14 sequence
# bits and an epoch of 2024-06-01 00:00:00 UTC, which leaves 41 timestamp
# bits:
#
#   bit 63 | timestamp 62..22 | worker 21..14 (region 21..19) | sequence 13..0
#
# Expected ids are computed here in Perl from that picture, not by the
# extension.
use strict;
use warnings;

use POSIX qw(floor);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $worker_bits   = 8;
my $region_bits   = 3;
my $sequence_bits = 14;
my $ts_bits       = 63 - $worker_bits - $sequence_bits;
my $epoch_ms      = 1717200000 * 1000;    # 2024-06-01 00:00:00 UTC

my $max_worker   = (1 << $worker_bits) - 1;
my $max_sequence = (1 << $sequence_bits) - 1;
my $max_ts       = (1 << $ts_bits) - 1;

# The id of (milliseconds since the epoch, worker, sequence).
sub compose
{
	my ($ms, $worker, $sequence) = @_;
	return ($ms << ($worker_bits + $sequence_bits))
	  | ($worker << $sequence_bits)
	  | $sequence;
}

# A time as timestamptz input and as PostgreSQL prints it with
# DateStyle ISO and TimeZone UTC (fraction without trailing zeros).
sub pg_time
{
	my ($ms_since_epoch) = @_;
	my $unix_ms = $epoch_ms + $ms_since_epoch;
	my $secs    = floor($unix_ms / 1000);
	my $frac    = $unix_ms - $secs * 1000;
	my @t       = gmtime($secs);
	my $text    = sprintf(
		'%04d-%02d-%02d %02d:%02d:%02d',
		$t[5] + 1900,
		$t[4] + 1,
		$t[3], $t[2], $t[1], $t[0]);
	if ($frac)
	{
		my $f = sprintf('%03d', $frac);
		$f =~ s/0+$//;
		$text .= ".$f";
	}
	return "$text+00";
}

my $node = PostgreSQL::Test::Cluster->new('layout');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'snowid'
snowid.worker_bits = $worker_bits
snowid.region_bits = $region_bits
snowid.region = 5
snowid.sequence_bits = $sequence_bits
snowid.epoch = '2024-06-01 00:00:00+00'
timezone = 'UTC'
datestyle = 'ISO, YMD'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

# Sanity of the Perl side: the picture above.
is($ts_bits, 41, 'layout leaves 41 timestamp bits');
is(compose($max_ts, $max_worker, $max_sequence),
	9223372036854775807, 'all fields at their maximum make 2^63 - 1');

is( $node->safe_psql(
		'postgres',
		q{SELECT current_setting('snowid.worker_bits') || '/' ||
		current_setting('snowid.region_bits') || '/' ||
		current_setting('snowid.sequence_bits') || ' ' ||
		current_setting('snowid.epoch')}),
	'8/3/14 2024-06-01 00:00:00+00',
	'settings are in force');

# One id with every field non-trivial.
{
	my $ms = 1717200000;    # some 19.9 days after the epoch
	$ms += 123;
	my ($worker, $sequence) = (0b10110101, 12345);
	my $id = compose($ms, $worker, $sequence);
	my $time = pg_time($ms);

	is( $node->safe_psql(
			'postgres',
			"SELECT snowid_from_parts('$time', $worker, $sequence)"),
		$id,
		"from_parts($time, $worker, $sequence) is $id");
	is( $node->safe_psql(
			'postgres', "SELECT d.* FROM snowid_decode('$id') AS d"),
		join('|', $time, $worker, $worker >> ($worker_bits - $region_bits),
			$sequence),
		'decode gives the parts back, region = top 3 worker bits');
	is( $node->safe_psql(
			'postgres',
			"SELECT snowid_timestamp('$id') || '|' || snowid_worker('$id') || '|' || "
			  . "snowid_region('$id') || '|' || snowid_sequence('$id')"),
		"$time|$worker|5|$sequence",
		'single-field functions agree (region 5 = 0b101)');
}

# Every bit of every field, alone: built from parts it lands at the right
# position, and decoding it gives back that one field.
my @cases;
for my $k (0 .. $sequence_bits - 1)
{
	push @cases, [ "sequence bit $k", 0, 0, 1 << $k, $k ];
}
for my $k (0 .. $worker_bits - 1)
{
	push @cases, [ "worker bit $k", 0, 1 << $k, 0, $sequence_bits + $k ];
}
for my $k (0 .. $ts_bits - 1)
{
	push @cases,
	  [ "timestamp bit $k", 1 << $k, 0, 0, $worker_bits + $sequence_bits + $k ];
}
my $values = join(
	",\n",
	map {
		my ($label, $ms, $w, $s) = @{ $cases[$_] };
		"($_, '$label', '" . pg_time($ms) . "'::timestamptz, $w, $s)"
	} 0 .. $#cases);
my @rows = split /\n/, $node->safe_psql(
	'postgres', qq{
SELECT label, id, d."timestamp", d.worker, d.region, d.sequence
FROM (VALUES $values) AS v(i, label, ts, w, s),
	LATERAL snowid_from_parts(v.ts, v.w, v.s) AS id,
	LATERAL snowid_decode(id) AS d
ORDER BY i
});
is(scalar(@rows), scalar(@cases), 'one row per bit');
for my $i (0 .. $#cases)
{
	my ($label, $ms, $w, $s, $pos) = @{ $cases[$i] };
	my $region = $w >> ($worker_bits - $region_bits);
	is($rows[$i],
		join('|', $label, 1 << $pos, pg_time($ms), $w, $region, $s),
		"$label is id bit $pos and decodes back");
}

# The ends of the layout.
my $last_time = pg_time($max_ts);
is( $node->safe_psql(
		'postgres',
		"SELECT snowid_from_parts('$last_time', $max_worker, $max_sequence)"),
	'9223372036854775807',
	"last millisecond ($last_time), worker 255, sequence 16383 is 2^63 - 1");
is( $node->safe_psql(
		'postgres', q{SELECT d.* FROM snowid_decode('9223372036854775807') AS d}),
	"$last_time|255|7|16383",
	'2^63 - 1 decodes to every field at its maximum');
is( $node->safe_psql(
		'postgres',
		q{SELECT snowid_from_time('2024-06-01 00:00:00+00') || ' ' ||
		snowid_timestamp('0')}),
	'0 2024-06-01 00:00:00+00',
	'id 0 is the epoch');
# 2024-12-01 is before the default epoch, but inside this layout.
is( $node->safe_psql(
		'postgres', q{SELECT snowid_from_time('2024-12-01 00:00:00+00')}),
	compose(183 * 86400 * 1000, 0, 0),
	'a time before the default epoch is in range here');

# Out-of-range parts, with the layout's own bounds in the error.
my ($ret, $stdout, $stderr);
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT snowid_from_parts('2024-06-01 00:00:00+00', 256, 0)");
isnt($ret, 0, 'worker 256 refused');
like($stderr, qr/worker id 256 out of range for snowid/, 'worker error');
like($stderr, qr/With 8 worker bits, worker ids run from 0 to 255\./,
	'worker error names the layout');
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT snowid_from_parts('2024-06-01 00:00:00+00', 0, 16384)");
isnt($ret, 0, 'sequence 16384 refused');
like($stderr, qr/With 14 sequence bits, sequences run from 0 to 16383\./,
	'sequence error names the layout');
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT snowid_from_time('2024-05-31 23:59:59.999+00')");
isnt($ret, 0, 'time before the epoch refused');
like(
	$stderr,
	qr/The layout covers 2024-06-01 00:00:00\+00 to \Q$last_time\E\./,
	'time error names the layout range');

$node->stop;

# Layouts that must stop the server at start-up, with a clear message.
# Each case adds its settings after the good ones (the last wins) and the
# configuration is put back afterwards.
my $conffile  = $node->data_dir . '/postgresql.conf';
my $good_conf = slurp_file($conffile);

sub bad_layout
{
	my ($name, $settings, @patterns) = @_;

	$node->append_conf('postgresql.conf', $settings);
	my $offset  = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	ok(!$started, "$name: server refuses to start");
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/FATAL:  invalid snowid layout/, "$name: log says why")
	  unless grep { $_ eq 'no-layout-message' } @patterns;
	like($log, $_, "$name: log matches $_")
	  for grep { ref $_ } @patterns;
	$node->stop if $started;

	open my $fh, '>', $conffile or die "could not write $conffile: $!";
	print $fh $good_conf;
	close $fh;
	return;
}

bad_layout(
	'region bits above worker bits',
	"snowid.region_bits = 9",
	qr/DETAIL:  snowid\.region_bits must be between 0 and snowid\.worker_bits\./
);
bad_layout(
	'37 timestamp bits',
	"snowid.worker_bits = 12\nsnowid.sequence_bits = 14",
	qr/DETAIL:  snowid\.worker_bits plus snowid\.sequence_bits must leave at least 38 timestamp bits/
);
bad_layout(
	'epoch in the future',
	"snowid.epoch = '2999-01-01 00:00:00+00'",
	qr/DETAIL:  snowid\.epoch must not be before 1970 or in the future\./);
bad_layout(
	'epoch before 1970',
	"snowid.epoch = '1969-12-31 23:59:59+00'",
	qr/DETAIL:  snowid\.epoch must not be before 1970 or in the future\./);
bad_layout(
	'infinite epoch',
	"snowid.epoch = 'infinity'",
	qr/DETAIL:  snowid\.epoch must be a finite time\./);
bad_layout(
	'unparsable epoch',
	"snowid.epoch = 'the day we shipped'",
	'no-layout-message',
	qr/FATAL:  invalid input syntax for type timestamp with time zone: "the day we shipped"/,
	qr/CONTEXT:  while parsing the value of "snowid\.epoch"/);
bad_layout(
	'worker bits out of range',
	"snowid.worker_bits = 21",
	qr/DETAIL:  "snowid\.worker_bits" is set to "21", but it must be a whole number from 1 to 20\./
);
bad_layout(
	'sequence bits not a number',
	"snowid.sequence_bits = 'twelve'",
	qr/DETAIL:  "snowid\.sequence_bits" is set to "twelve", but it must be a whole number from 1 to 22\./
);

# The edge that is still allowed: exactly 38 timestamp bits, and as many
# region bits as worker bits.
$node->append_conf('postgresql.conf',
	"snowid.worker_bits = 11\nsnowid.region_bits = 11\nsnowid.region = 2047\nsnowid.sequence_bits = 14"
);
ok($node->start(fail_ok => 1), '38 timestamp bits, all-region workers: starts');
is( $node->safe_psql(
		'postgres',
		q{SELECT d.worker || '|' || d.region || '|' || d.sequence || '|' ||
		snowid_from_parts(d."timestamp", d.worker, d.sequence)
		FROM snowid_decode('9223372036854775807') AS d}),
	'2047|2047|16383|9223372036854775807',
	'38-bit layout decodes and rebuilds 2^63 - 1');
is( $node->safe_psql(
		'postgres',
		q{SELECT snowid_timestamp('9223372036854775807')}),
	pg_time((1 << 38) - 1),
	'38-bit layout ends 2^38 - 1 ms after the epoch');
$node->stop;

done_testing();
