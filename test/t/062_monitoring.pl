# Monitoring: every query in monitoring/postgres_exporter_queries.yaml
# runs, as a role holding only pg_monitor, against a real node and a real
# coordinator, and returns rows with exactly the columns it declares, with
# labels as text and metrics as numbers.
#
# The file is read with a small parser for the subset of YAML it keeps to
# (no YAML module needed); where Python's yaml module exists, a real YAML
# parser must read the same structure.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $file = abs_path(dirname(__FILE__) . '/../../monitoring/postgres_exporter_queries.yaml');

# Parse the queries file: returns a list of
# { name, query, master, cache_seconds, metrics => [ { column, usage, description } ] }
# in file order.  Dies on any line outside the subset.
sub parse_queries
{
	my ($path) = @_;
	open my $fh, '<', $path or die "could not read $path: $!";
	my @lines = <$fh>;
	close $fh;
	my (@queries, $q, $metric, $in_metrics);
	my $unquote = sub {
		my ($v) = @_;
		return $1 if $v =~ /^"((?:[^"\\]|\\.)*)"$/;
		return $1 if $v =~ /^'([^']*)'$/;
		return $v;
	};
	for (my $i = 0; $i < @lines; $i++)
	{
		my $line = $lines[$i];
		chomp $line;
		my $where = "$path line " . ($i + 1);
		next if $line =~ /^\s*(#.*)?$/;
		if ($line =~ /^([A-Za-z_][A-Za-z0-9_]*):\s*$/)
		{
			$q = { name => $1, metrics => [] };
			push @queries, $q;
			($metric, $in_metrics) = (undef, 0);
		}
		elsif (!$q)
		{
			die "$where: expected a top-level key\n";
		}
		elsif ($line =~ /^  query:\s*\|\s*$/)
		{
			my @body;
			while ($i + 1 < @lines && $lines[ $i + 1 ] =~ /^(    .*|\s*)$/)
			{
				my $l = $lines[ ++$i ];
				chomp $l;
				push @body, $l =~ s/^    //r;
			}
			pop @body while @body && $body[-1] =~ /^\s*$/;
			$q->{query} = join("\n", @body) . "\n";
			$in_metrics = 0;
		}
		elsif ($line =~ /^  query:\s*(\S.*)$/)
		{
			$q->{query} = $unquote->($1);
			$in_metrics = 0;
		}
		elsif ($line =~ /^  (master|cache_seconds|runonserver):\s*(\S.*)$/)
		{
			$q->{$1} = $unquote->($2);
			$in_metrics = 0;
		}
		elsif ($line =~ /^  metrics:\s*$/)
		{
			$in_metrics = 1;
		}
		elsif ($in_metrics && $line =~ /^    - ([A-Za-z_][A-Za-z0-9_]*):\s*$/)
		{
			$metric = { column => $1 };
			push @{ $q->{metrics} }, $metric;
		}
		elsif ($in_metrics && $metric
			&& $line =~ /^        (usage|description):\s*(\S.*)$/)
		{
			$metric->{$1} = $unquote->($2);
		}
		else
		{
			die "$where: not in the subset of YAML this file keeps to: $line\n";
		}
	}
	return @queries;
}

my @queries = eval { parse_queries($file) };
ok(!$@, 'the queries file parses') or diag($@);
is(join(',', map { $_->{name} } @queries),
	'snowid_stats,snowid_status,snowid_coordinator_worker_pool',
	'it exposes snowid_stats, snowid_status and the coordinator\'s worker pool');

# A real YAML parser, where there is one, reads the same thing.
if (system('python3 -c "import yaml" >/dev/null 2>&1') == 0)
{
	my ($json, $err) = ('', '');
	IPC::Run::run([ 'python3', '-c',
			'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))', $file ],
		'>', \$json, '2>', \$err) or diag($err);
	my $doc = decode_json($json);
	my $same = 1;
	$same &&= join(',', sort keys %$doc) eq join(',', sort map { $_->{name} } @queries);
	foreach my $q (@queries)
	{
		my $d = $doc->{ $q->{name} } // {};
		$same &&= ($d->{query} // '') eq $q->{query};
		$same &&= ($d->{master} ? 'true' : 'false') eq $q->{master} if defined $q->{master};
		my @m = map { my ($c) = keys %$_; [ $c, $_->{$c}{usage}, $_->{$c}{description} ] }
		  @{ $d->{metrics} // [] };
		$same &&= JSON::PP->new->canonical->encode(\@m) eq JSON::PP->new->canonical->encode(
			[ map { [ $_->{column}, $_->{usage}, $_->{description} ] } @{ $q->{metrics} } ]);
	}
	ok($same, 'a YAML parser (python3 yaml) reads the same queries, columns and usages');
}
else
{
	note('python3 yaml not available: the file was checked by the subset parser only');
}

my %usages = map { $_ => 1 } qw(LABEL COUNTER GAUGE MAPPEDMETRIC DURATION DISCARD HISTOGRAM);
foreach my $q (@queries)
{
	ok(length($q->{query} // ''), "$q->{name}: has a query");
	is($q->{master}, 'true', "$q->{name}: master: true (runs once, in the exporter's database)");
	ok(@{ $q->{metrics} } > 0, "$q->{name}: declares columns");
	foreach my $m (@{ $q->{metrics} })
	{
		ok($usages{ $m->{usage} // '' } && length($m->{description} // ''),
			"$q->{name}.$m->{column}: usage $m->{usage} and a description");
		like("$q->{name}_$m->{column}", qr/^[a-zA-Z_:][a-zA-Z0-9_:]*$/,
			"$q->{name}_$m->{column} is a valid Prometheus metric name");
	}
}

# Run one query as the exporter would (role "exporter", pg_monitor only)
# and check its rows against the declared columns.  Returns the rows.
sub check_query
{
	my ($node, $db, $q, $label) = @_;
	my $sql = "SELECT COALESCE(json_agg(row_to_json(q)), '[]') FROM ($q->{query}) q";
	my ($rc, $out, $err) = $node->psql($db, $sql,
		extra_params => [ '-U', 'exporter' ]);
	is($rc, 0, "$label: $q->{name} runs as a pg_monitor role") or diag($err);
	my $rows = $rc == 0 ? decode_json($out) : [];
	ok(@$rows > 0, "$label: $q->{name} returns rows (" . scalar(@$rows) . ')');
	my @declared = sort map { $_->{column} } @{ $q->{metrics} };
	my %usage = map { $_->{column} => $_->{usage} } @{ $q->{metrics} };
	foreach my $row (@$rows)
	{
		is(join(',', sort keys %$row), join(',', @declared),
			"$label: $q->{name} returns exactly the declared columns");
		my @bad;
		foreach my $col (keys %$row)
		{
			my $v = $row->{$col};
			my $u = $usage{$col} // '';
			if ($u eq 'LABEL')
			{
				push @bad, "$col is not text" unless defined $v && !ref $v;
			}
			elsif ($u ne 'DISCARD')
			{
				push @bad, "$col is not a number (" . ($v // 'null') . ')'
				  unless defined $v && $v =~ /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
			}
		}
		is("@bad", '', "$label: $q->{name}: labels are text, metrics are numbers");
	}
	return $rows;
}

my %q = map { $_->{name} => $_ } @queries;

# ---- a remote coordinator with regions, and a node leasing from it -------

my $coord = snowid_coordinator_node('coord',
	init => 'worker_bits => 4, region_bits => 1');
my $node = snowid_remote_node('node', $coord, conf => q{
snowid.worker_bits = 4
snowid.region_bits = 1
snowid.region = 1
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'the node holds a lease');
$node->safe_psql('postgres', 'SELECT count(snowid_nextval()) FROM generate_series(1, 100)');
foreach my $server ($node, $coord)
{
	$server->safe_psql('postgres', 'CREATE ROLE exporter LOGIN; GRANT pg_monitor TO exporter');
}

my $rows = check_query($node, 'postgres', $q{snowid_stats}, 'node');
ok(($rows->[0]{ids} // 0) >= 100, 'snowid_stats_ids counts the ids issued');
ok(($rows->[0]{lease_acquisitions} // 0) >= 1, 'snowid_stats_lease_acquisitions counted the grant');

$rows = check_query($node, 'postgres', $q{snowid_status}, 'node');
my $s = $rows->[0] // {};
is($s->{state}, 'active', 'snowid_status: state label active');
is($s->{node_name}, 'node', 'snowid_status: node_name label');
is($s->{active}, 1, 'snowid_status_active is 1');
ok($s->{worker_id} >= 8 && $s->{worker_id} < 16, "snowid_status_worker_id in region 1 ($s->{worker_id})");
ok($s->{lease_valid_for_seconds} > 0 && $s->{lease_valid_for_seconds} <= 6,
	"snowid_status_lease_valid_for_seconds within the 6 s lease ($s->{lease_valid_for_seconds})");
ok(abs($s->{clock_offset_ms}) < 1000, "snowid_status_clock_offset_ms small ($s->{clock_offset_ms})");
ok($s->{time_exhausted_in_seconds} > 50 * 365 * 86400,
	'snowid_status_time_exhausted_in_seconds: decades away');
ok($s->{last_renewal_age_seconds} >= 0 && $s->{last_renewal_age_seconds} < 6,
	"snowid_status_last_renewal_age_seconds recent ($s->{last_renewal_age_seconds})");

$rows = check_query($coord, 'postgres', $q{snowid_coordinator_worker_pool}, 'coordinator');
is(join(' ', map { "$_->{region}:$_->{total}/$_->{held}/$_->{free}/$_->{low}" }
		sort { $a->{region} cmp $b->{region} } @$rows),
	'0:8/0/8/0 1:8/1/7/0',
	'snowid_coordinator_worker_pool: one row per region, the node\'s lease held in region 1');

# A state other than active shows in the label and in active = 0.
$coord->stop;
ok(poll_until($node, "SELECT state <> 'active' FROM snowid_status()", 't', 30),
	'with the coordinator down the lease runs out');
$rows = check_query($node, 'postgres', $q{snowid_status}, 'node, coordinator down');
isnt($rows->[0]{state}, 'active', "state label shows $rows->[0]{state}");
is($rows->[0]{active}, 0, 'snowid_status_active is 0');
is($rows->[0]{lease_valid_for_seconds}, 0, 'snowid_status_lease_valid_for_seconds is 0');
$node->stop;

# ---- local mode: everything in one database ------------------------------

my $local = snowid_node('local');
$local->start;
$local->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($local, 'active'), 'the local-mode node holds a lease');
$local->safe_psql('postgres', 'CREATE ROLE exporter LOGIN; GRANT pg_monitor TO exporter');
check_query($local, 'postgres', $_, 'local node') for @queries;
is($local->safe_psql('postgres',
		"SELECT region FROM ($q{snowid_coordinator_worker_pool}{query}) q"),
	'all', 'without region bits the pool has one row, region "all"');
$local->stop;

done_testing();
