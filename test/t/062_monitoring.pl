# Monitoring through the real exporter: Debian's prometheus-postgres-exporter
# runs monitoring/postgres_exporter_*.yaml (--extend.query-path), logged in
# as a role holding only pg_monitor, against a node of a cluster, its
# coordinator and a local-mode node.  Each scrape of /metrics (on
# 127.0.0.1) must show every metric the file declares, with the declared
# type, its labels, and the values the servers hold: the ids counter after
# a known number of calls, the lease, the worker pool per region, a fence
# after a promotion, a refusing state after the coordinator stopped.
#
# The declared metrics come from a real YAML parser (python3 yaml); the
# three files must declare the same sections (node + coordinator = all).
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use HTTP::Tiny;
use IO::Socket::INET;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use SnowidTest;
use SnowidTest::Ecosystem;

my $dir = abs_path(dirname(__FILE__) . '/../../monitoring');
my %file = (
	all => "$dir/postgres_exporter_queries.yaml",
	node => "$dir/postgres_exporter_node.yaml",
	coordinator => "$dir/postgres_exporter_coordinator.yaml");
my $exporter = 'prometheus-postgres-exporter';

my ($ver_out, $ver_err) = ('', '');
if (!ok(eval { IPC::Run::run([ $exporter, '--version' ], '>', \$ver_out, '2>', \$ver_err) },
		"$exporter is installed"))
{
	diag('install the Debian package prometheus-postgres-exporter (scripts/common.sh does)');
	done_testing();
	exit;
}
note(($ver_out . $ver_err) =~ /(postgres_exporter, version \S+)/ ? $1 : $ver_out . $ver_err);

# ---- what the files declare -----------------------------------------

# { section => { query, metrics => [ [ column, usage, description ] ] } }
sub load_queries
{
	my ($path) = @_;
	my $doc = yaml_file($path);
	my %q;
	foreach my $section (keys %$doc)
	{
		$q{$section} = {
			query => $doc->{$section}{query},
			master => $doc->{$section}{master},
			metrics => [ map { my ($c) = keys %$_; [ $c, $_->{$c}{usage}, $_->{$c}{description} ] }
				  @{ $doc->{$section}{metrics} } ] };
	}
	return \%q;
}
my %queries = map { $_ => load_queries($file{$_}) } keys %file;
my $canon = JSON::PP->new->canonical;
is($canon->encode({ %{ $queries{node} }, %{ $queries{coordinator} } }),
	$canon->encode($queries{all}),
	'node and coordinator files together hold exactly the sections of postgres_exporter_queries.yaml');
is(join(' ', sort keys %{ $queries{node} }), 'snowid_stats snowid_status', 'node file: snowid_stats, snowid_status');
is(join(' ', sort keys %{ $queries{coordinator} }),
	'snowid_coordinator_fence snowid_coordinator_worker_pool',
	'coordinator file: snowid_coordinator_worker_pool, snowid_coordinator_fence');
foreach my $section (sort keys %{ $queries{all} })
{
	ok($queries{all}{$section}{master}, "$section: master: true (runs once, in the exporter's database)");
}

# The metrics a file declares: { name => { type, labels => [ ... ] } }.
sub declared
{
	my ($which) = @_;
	my %m;
	foreach my $section (keys %{ $queries{$which} })
	{
		my @cols = @{ $queries{$which}{$section}{metrics} };
		my @labels = sort map { $_->[0] } grep { $_->[1] eq 'LABEL' } @cols;
		foreach my $c (grep { $_->[1] ne 'LABEL' && $_->[1] ne 'DISCARD' } @cols)
		{
			$m{"${section}_$c->[0]"} = { type => lc $c->[1], labels => \@labels, help => $c->[2] };
		}
	}
	return \%m;
}

# ---- the exporter -------------------------------------------------------

sub free_port
{
	my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1)
	  or die "no free port: $!";
	my $port = $s->sockport;
	close $s;
	return $port;
}

# Start the exporter for database postgres of $server, as role exporter,
# with the queries file $which.  Returns a handle for scrape() / stop_exporter().
sub start_exporter
{
	my ($server, $which) = @_;
	my $port = free_port();
	my $log = $PostgreSQL::Test::Utils::log_path . "/exporter_" . $server->name . "_$which.log";
	local $ENV{DATA_SOURCE_NAME} = 'host=' . $server->host . ' port=' . $server->port
	  . ' user=exporter dbname=postgres sslmode=disable';
	my $h = IPC::Run::start(
		[ $exporter, "--web.listen-address=127.0.0.1:$port",
			"--extend.query-path=$file{$which}",
			'--disable-default-metrics', '--disable-settings-metrics',
			'--log.level=info' ],
		'<', \undef, '>', $log, '2>&1');
	my $e = { h => $h, url => "http://127.0.0.1:$port/metrics", log => $log };
	for (my $i = 0; $i < 300; $i++)
	{
		return $e if HTTP::Tiny->new(timeout => 5)->get($e->{url})->{success};
		usleep(100_000);
	}
	die "the exporter did not answer on $e->{url}; see $log";
}

sub stop_exporter
{
	my ($e) = @_;
	$e->{h}->signal('TERM');
	$e->{h}->finish;
}

# Scrape once: { types => { name => type }, samples => { name => [ { labels => {...}, value } ] } }
sub scrape
{
	my ($e) = @_;
	my $res = HTTP::Tiny->new(timeout => 30)->get($e->{url});
	die "scrape of $e->{url} failed: $res->{status} $res->{reason}" unless $res->{success};
	my (%types, %samples);
	foreach my $line (split /\n/, $res->{content})
	{
		if ($line =~ /^# TYPE (\S+) (\S+)$/)
		{
			$types{$1} = $2;
		}
		elsif ($line =~ /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/)
		{
			my ($name, $labels, $value) = ($1, $2 // '', $3);
			my %l;
			while ($labels =~ /\G([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gc)
			{
				$l{$1} = $2;
			}
			push @{ $samples{$name} }, { labels => \%l, value => $value };
		}
	}
	return { types => \%types, samples => \%samples };
}

# The value of metric $name in scrape $s whose labels include %match.
sub value_of
{
	my ($s, $name, %match) = @_;
	foreach my $sample (@{ $s->{samples}{$name} // [] })
	{
		next if grep { ($sample->{labels}{$_} // '') ne $match{$_} } keys %match;
		return $sample->{value};
	}
	return undef;
}

# Every metric the file declares is there with its type and labels (and
# the exporter's own server label), and no other snowid metric is.
sub check_declared
{
	my ($s, $which, $label) = @_;
	my $d = declared($which);
	foreach my $name (sort keys %$d)
	{
		is($s->{types}{$name}, $d->{$name}{type}, "$label: $name has TYPE $d->{$name}{type}");
		my @samples = @{ $s->{samples}{$name} // [] };
		ok(@samples, "$label: $name has samples (" . scalar(@samples) . ')');
		my @want = sort(@{ $d->{$name}{labels} }, 'server');
		my @bad = grep { join(',', sort keys %{ $_->{labels} }) ne join(',', @want) } @samples;
		is(scalar(@bad), 0, "$label: $name is labelled by " . join(', ', @want));
		my @nan = grep { $_->{value} !~ /^(-?[0-9.eE+-]+|NaN)$/ } @samples;
		is(scalar(@nan), 0, "$label: $name values are numbers");
	}
	my @extra = grep { /^snowid_/ && !$d->{$_} } sort keys %{ $s->{types} };
	is("@extra", '', "$label: no snowid metric the file does not declare");
	is(value_of($s, 'pg_exporter_last_scrape_error'), '0', "$label: the scrape ran every query without an error");
	is(value_of($s, 'pg_up'), '1', "$label: pg_up 1");
}

# ---- a remote coordinator with regions, and a node leasing from it -------

my $coord = snowid_coordinator_node('coord', allows_streaming => 1,
	init => 'worker_bits => 4, region_bits => 1');
my $node = snowid_remote_node('node', $coord, conf => q{
snowid.worker_bits = 4
snowid.region_bits = 1
snowid.region = 1
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'the node holds a lease');
foreach my $server ($node, $coord)
{
	$server->safe_psql('postgres', 'CREATE ROLE exporter LOGIN; GRANT pg_monitor TO exporter');
}
is($node->safe_psql('postgres',
		q{SELECT r.rolsuper, array_agg(b.rolname) FROM pg_roles r
		  JOIN pg_auth_members m ON m.member = r.oid JOIN pg_roles b ON b.oid = m.roleid
		  WHERE r.rolname = 'exporter' GROUP BY r.rolsuper}),
	'f|{pg_monitor}', 'the exporter logs in as a role that holds pg_monitor only');

# A known number of ids: 100 single calls, then one batch of 50.
$node->safe_psql('postgres', 'SELECT count(snowid_nextval()) FROM generate_series(1, 100)');

my $e = start_exporter($node, 'node');
my $s = scrape($e);
check_declared($s, 'node', 'node');
my %me = (node_name => 'node');
is(value_of($s, 'snowid_stats_ids'), 100, 'snowid_stats_ids is 100 after 100 calls');
is(value_of($s, 'snowid_stats_calls'), 100, 'snowid_stats_calls is 100');
is(value_of($s, 'snowid_stats_batch_calls'), 0, 'snowid_stats_batch_calls is 0');
is(value_of($s, 'snowid_stats_no_lease_refusals'), 0, 'snowid_stats_no_lease_refusals is 0');
ok(value_of($s, 'snowid_stats_lease_acquisitions') >= 1, 'snowid_stats_lease_acquisitions counted the grant');
is(value_of($s, 'snowid_status_active', %me, state => 'active'), 1,
	'snowid_status_active{node_name="node",state="active"} is 1');
my $worker = $node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
is(value_of($s, 'snowid_status_worker_id', %me), $worker, "snowid_status_worker_id is the leased worker id ($worker)");
ok($worker >= 8 && $worker < 16, 'in region 1');
my $valid = value_of($s, 'snowid_status_lease_valid_for_seconds', %me);
ok($valid > 0 && $valid <= 6, "snowid_status_lease_valid_for_seconds within the 6 s lease ($valid)");
my $age = value_of($s, 'snowid_status_last_renewal_age_seconds', %me);
ok($age >= 0 && $age < 6, "snowid_status_last_renewal_age_seconds recent ($age)");
ok(abs(value_of($s, 'snowid_status_clock_offset_ms', %me)) < 1000, 'snowid_status_clock_offset_ms small');
ok(value_of($s, 'snowid_status_time_exhausted_in_seconds', %me) > 50 * 365 * 86400,
	'snowid_status_time_exhausted_in_seconds: decades away');

# The counter moves with the calls: one batch of 50 more.
$node->safe_psql('postgres', 'SELECT count(*) FROM snowid_generate(50)');
$s = scrape($e);
is(value_of($s, 'snowid_stats_ids'), 150, 'after snowid_generate(50): snowid_stats_ids is 150');
is(value_of($s, 'snowid_stats_calls'), 101, 'snowid_stats_calls is 101');
is(value_of($s, 'snowid_stats_batch_calls'), 1, 'snowid_stats_batch_calls is 1');

# Without pg_monitor the queries fail, and the exporter says so.
$node->safe_psql('postgres', 'REVOKE pg_monitor FROM exporter');
$s = scrape($e);
is(value_of($s, 'pg_exporter_last_scrape_error'), '1', 'without pg_monitor the scrape reports an error');
ok(!exists $s->{samples}{snowid_stats_ids}, 'and snowid_stats_ids is gone');
$node->safe_psql('postgres', 'GRANT pg_monitor TO exporter');
$s = scrape($e);
is(value_of($s, 'pg_exporter_last_scrape_error'), '0', 'with pg_monitor again it is back');

# ---- the coordinator: the worker pool per region, and the fence -------

my $ec = start_exporter($coord, 'coordinator');
$s = scrape($ec);
check_declared($s, 'coordinator', 'coordinator');
my $pool = join ' ', map {
	my $r = $_;
	"$r:" . join '/', map { value_of($s, "snowid_coordinator_worker_pool_$_", region => $r) // '?' }
	  qw(total held cooling_down free low)
} qw(0 1);
is($pool, '0:8/0/0/8/0 1:8/1/0/7/0',
	'snowid_coordinator_worker_pool_*{region}: 8 each, the node\'s lease held in region 1');
is(value_of($s, 'snowid_coordinator_fence_events'), 0, 'no fence yet: snowid_coordinator_fence_events 0');
is(value_of($s, 'snowid_coordinator_fence_age_seconds'), 'NaN', 'and snowid_coordinator_fence_age_seconds NaN');
stop_exporter($ec);

# A standby of the coordinator, promoted: its new identity fences it.
$coord->backup('coord_base');
my $promoted = PostgreSQL::Test::Cluster->new('coord_promoted');
$promoted->init_from_backup($coord, 'coord_base', has_streaming => 1);
$promoted->start;
$coord->wait_for_catchup($promoted);
$promoted->promote;
$promoted->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby did not leave recovery';
is($promoted->safe_psql('postgres', 'SELECT snowid_coordinator.check_identity()'), 'ok',
	'the promoted coordinator checks its identity (and fences itself)');
my $ep = start_exporter($promoted, 'coordinator');
$s = scrape($ep);
is(value_of($s, 'snowid_coordinator_fence_events'), 1, 'after the promotion: snowid_coordinator_fence_events 1');
my $fence_age = value_of($s, 'snowid_coordinator_fence_age_seconds');
ok($fence_age ne 'NaN' && $fence_age >= 0 && $fence_age < 120,
	"snowid_coordinator_fence_age_seconds is recent ($fence_age), so SnowidCoordinatorFenced fires");
stop_exporter($ep);
$promoted->stop;

# ---- a state other than active shows as a label and as active 0 -------

$coord->stop;
ok(poll_until($node, "SELECT state <> 'active' FROM snowid_status()", 't', 30),
	'with the coordinator down the lease runs out');
my $state = $node->safe_psql('postgres', 'SELECT state FROM snowid_status()');
$s = scrape($e);
is(value_of($s, 'snowid_status_active', %me, state => $state), 0,
	"snowid_status_active{state=\"$state\"} is 0, so SnowidNodeNotGenerating fires");
ok(!defined value_of($s, 'snowid_status_active', state => 'active'), 'no series with state active is left');
is(value_of($s, 'snowid_status_lease_valid_for_seconds', %me), 0, 'snowid_status_lease_valid_for_seconds is 0');
my $wid = $node->safe_psql('postgres', 'SELECT COALESCE(worker_id, -1) FROM snowid_status()');
is(value_of($s, 'snowid_status_worker_id', %me), $wid,
	"snowid_status_worker_id is what snowid_status() says ($wid; -1 once no lease is left)");
stop_exporter($e);
$node->stop;

# ---- local mode: every section in one database -----------------------

my $local = snowid_node('local');
$local->start;
$local->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($local, 'active'), 'the local-mode node holds a lease');
$local->safe_psql('postgres', 'CREATE ROLE exporter LOGIN; GRANT pg_monitor TO exporter');
my $el = start_exporter($local, 'all');
$s = scrape($el);
check_declared($s, 'all', 'local node');
is(value_of($s, 'snowid_coordinator_worker_pool_total', region => 'all'), 1024,
	'without region bits the pool has one series, region "all", of 1024 worker ids');
is(value_of($s, 'snowid_coordinator_worker_pool_held', region => 'all'), 1, 'one of them held');
stop_exporter($el);
$local->stop;

done_testing();
