# Helpers shared by snowid's TAP suites: nodes with the library preloaded
# and short leases, and waiting for a node's lease state.
package SnowidTest;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use IPC::Run;
use Time::HiRes qw(usleep);

use Exporter 'import';
our @EXPORT = qw(snowid_node wait_for_state snowid_state
  create_id_tables generate_ids start_generator stop_generator
  wait_for_ids wait_until_up check_ids set_preload log_offset poll_until);

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

# ---- Errors with their SQLSTATE, and clock faults (libfaketime) ----

push @EXPORT, qw(psql_error faketime_lib start_with_faketime set_clock_offset);

# Run $sql on $node (database $db) expecting an error.  Returns
# ($sqlstate, $message, $stderr); $sqlstate is '' if the statement did
# not fail.  Extra psql parameters (e.g. [ '-U', 'role' ]) in $extra.
sub psql_error
{
	my ($node, $db, $sql, $extra) = @_;
	my ($rc, $out, $err) = $node->psql(
		$db, $sql,
		on_error_stop => 1,
		extra_params => [ '-v', 'VERBOSITY=verbose', @{ $extra // [] } ]);
	return ('', '', $err) if $rc == 0;
	my ($state, $message) = $err =~ /ERROR:\s+([0-9A-Z]{5}):\s+([^\n]*)/;
	return ($state // '?', $message // '', $err);
}

# The libfaketime preload library (Debian package libfaketime), or undef.
sub faketime_lib
{
	for my $lib ('/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1',
		'/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1',
		'/usr/lib/faketime/libfaketimeMT.so.1')
	{
		return $lib if -e $lib;
	}
	return undef;
}

# Write a libfaketime offset (e.g. '+0', '-0.020', '-3': seconds, with
# a '.' fraction) to $file.  libfaketime rereads the file at every clock
# read and falls back to '+0' while it is missing or empty, so the new
# content is written aside and renamed into place.
sub set_clock_offset
{
	my ($file, $offset) = @_;
	open my $fh, '>', "$file.new" or die "could not write $file.new: $!";
	print $fh "$offset\n";
	close $fh or die "could not write $file.new: $!";
	rename("$file.new", $file) or die "could not rename $file.new: $!";
	return;
}

# Start $node with libfaketime preloaded into the postmaster (and so into
# every server process), its CLOCK_REALTIME offset read from $file at
# every clock read, CLOCK_MONOTONIC left alone.  Only pg_ctl and the
# server see the preload; the test's own psql runs do not.
sub start_with_faketime
{
	my ($node, $file) = @_;
	my $lib = faketime_lib() or die "libfaketime is not installed";
	set_clock_offset($file, '+0') unless -e $file;
	local $ENV{LD_PRELOAD} = $lib;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	local $ENV{DONT_FAKE_MONOTONIC} = '1';    # older spelling
	return $node->start;
}


# --- Ids that must survive restarts -------------------------------------
#
# Generated ids go into snowid_gen_ids (no unique constraint, so that a
# duplicate shows up as a count instead of stopping the generator), tagged
# with a phase.  Refusals seen by a background generator go into
# snowid_gen_errors; a row in snowid_gen_stop ends that generator.
# Everything lives in database postgres, which needs CREATE EXTENSION
# snowid first.

sub create_id_tables
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
CREATE TABLE snowid_gen_ids (
	phase	text NOT NULL,
	id		snowid NOT NULL,
	at		timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE INDEX ON snowid_gen_ids (id);
CREATE TABLE snowid_gen_errors (
	phase	text NOT NULL,
	at		timestamptz NOT NULL DEFAULT clock_timestamp(),
	sqlstate text,
	message	text);
CREATE TABLE snowid_gen_stop (phase text NOT NULL);
});
	return;
}

# Generate $n ids with snowid_nextval() and $n with snowid_generate() in
# one session and store them under $phase.  Dies on any error.
sub generate_ids
{
	my ($node, $phase, $n) = @_;
	$node->safe_psql('postgres', qq{
INSERT INTO snowid_gen_ids (phase, id)
	SELECT '$phase', snowid_nextval() FROM generate_series(1, $n);
INSERT INTO snowid_gen_ids (phase, id)
	SELECT '$phase', snowid_generate($n);
});
	return;
}

# Start a psql session that generates ids in a loop until a row for
# $phase appears in snowid_gen_stop, $opts{seconds} (default 40) pass, or
# the server goes away.  Each round stores $opts{batch} (default 50) ids,
# alternately from snowid_nextval() and snowid_generate(), and commits;
# a refused round is recorded in snowid_gen_errors and the loop goes on.
# Its application_name is "snowid_gen_$phase".
sub start_generator
{
	my ($node, $phase, %opts) = @_;
	my $batch   = $opts{batch}   // 50;
	my $seconds = $opts{seconds} // 40;
	my $pause   = $opts{pause}   // 0.005;
	my $sql     = qq{
DO \$gen\$
DECLARE
	deadline timestamptz := clock_timestamp() + make_interval(secs => $seconds);
	round bigint := 0;
BEGIN
	LOOP
		round := round + 1;
		BEGIN
			IF round % 2 = 0 THEN
				INSERT INTO snowid_gen_ids (phase, id)
					SELECT '$phase', snowid_nextval() FROM generate_series(1, $batch);
			ELSE
				INSERT INTO snowid_gen_ids (phase, id)
					SELECT '$phase', snowid_generate($batch);
			END IF;
		EXCEPTION WHEN others THEN
			INSERT INTO snowid_gen_errors (phase, sqlstate, message)
				VALUES ('$phase', SQLSTATE, SQLERRM);
		END;
		COMMIT;
		EXIT WHEN clock_timestamp() > deadline
			OR EXISTS (SELECT FROM snowid_gen_stop s WHERE s.phase = '$phase');
		PERFORM pg_sleep($pause);
	END LOOP;
END
\$gen\$;
};
	my %gen = (phase => $phase, stdout => '', stderr => '');
	my @cmd = (
		$node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1',
		'-d', $node->connstr('postgres') . " application_name=snowid_gen_$phase",
		'-c', $sql);
	$gen{run} = IPC::Run::start(\@cmd, '<', \undef, '>', \$gen{stdout},
		'2>', \$gen{stderr}, IPC::Run::timeout($seconds + 60));
	return \%gen;
}

# Tell a generator to stop (if the server is up) and wait for it to end.
# Returns its exit status (0 = it ran to the end without losing its
# connection).
sub stop_generator
{
	my ($node, $gen) = @_;
	$node->psql('postgres',
		"INSERT INTO snowid_gen_stop VALUES ('$gen->{phase}')");
	my $rc = eval { $gen->{run}->finish; $gen->{run}->result(0) };
	if (!defined $rc)
	{
		note("generator $gen->{phase}: $@");
		eval { $gen->{run}->kill_kill };
		$rc = -1;
	}
	note("generator $gen->{phase} ended with status $rc; stderr: $gen->{stderr}")
	  if $rc != 0;
	return $rc;
}

# Wait (up to 30 s) until at least $n ids of $phase (stored after $since,
# a timestamptz literal, if given) are stored.
sub wait_for_ids
{
	my ($node, $phase, $n, $since) = @_;
	my $cond = $since ? " AND at > '$since'" : '';
	return poll_until($node,
		"SELECT count(*) >= $n FROM snowid_gen_ids WHERE phase = '$phase'$cond",
		't', 30);
}

# Run $sql in database postgres every 0.1 s until it succeeds and prints
# $expected (default 't'), for at most $timeout seconds (default 30).
# Returns true if it did.
sub poll_until
{
	my ($node, $sql, $expected, $timeout) = @_;
	$expected //= 't';
	$timeout  //= 30;
	my $deadline = Time::HiRes::time() + $timeout;
	my ($ret, $out, $err);
	while (Time::HiRes::time() < $deadline)
	{
		($ret, $out, $err) = $node->psql('postgres', $sql);
		return 1 if $ret == 0 && $out eq $expected;
		usleep(100_000);
	}
	note("poll_until gave up on: $sql\nlast output: $out\nstderr: $err");
	return 0;
}

# Wait until the node accepts connections (after a crash restart).
sub wait_until_up
{
	my ($node, $timeout) = @_;
	$timeout //= 60;
	for (my $i = 0; $i < $timeout * 10; $i++)
	{
		my $ret = $node->psql('postgres', 'SELECT 1');
		return 1 if $ret == 0;
		usleep(100_000);
	}
	return 0;
}

# Assertions on the stored ids after a restart: no id appears twice, and
# for every worker id that already appears in @$old phases, every id of
# the @$new phases with that worker id is above all of the old ones.
# Returns the number of new ids that share a worker id with old ones.
sub check_ids
{
	my ($node, $label, $old, $new) = @_;
	my $old_list = join(',', map { "'$_'" } @$old);
	my $new_list = join(',', map { "'$_'" } @$new);

	is( $node->safe_psql('postgres',
			'SELECT count(*) - count(DISTINCT id) FROM snowid_gen_ids'),
		'0', "$label: no id issued twice");
	my ($below, $shared) = split /\|/, $node->safe_psql(
		'postgres', qq{
WITH old AS (
	SELECT snowid_worker(id) AS worker, max(id) AS top
	FROM snowid_gen_ids WHERE phase IN ($old_list) GROUP BY 1)
SELECT count(*) FILTER (WHERE n.id <= old.top), count(*)
FROM snowid_gen_ids n JOIN old ON snowid_worker(n.id) = old.worker
WHERE n.phase IN ($new_list)});
	is($below, '0',
		"$label: with the same worker id, every new id is above every old one ($shared such ids)");
	return $shared;
}

# Turn the preloading of snowid on or off (takes effect at the next start).
# Off, the server has no keeper, so the coordinator's tables can be read
# as the last run left them.
sub set_preload
{
	my ($node, $on) = @_;
	$node->adjust_conf('postgresql.conf', 'shared_preload_libraries',
		$on ? "'snowid'" : "''");
	return;
}

# The current end of the node's log, for slurp_file($node->logfile, $offset).
sub log_offset
{
	my ($node) = @_;
	return -s $node->logfile;
}

1;

# --- clusters: a remote coordinator and nodes that lease from it ---

push @EXPORT, qw(snowid_coordinator_node snowid_remote_node coordinator_conninfo);

# A started coordinator server with snowid_coordinator installed and
# initialised (lease 6 s, safety 2 s, margin 1 s), a login role
# "snowid_node" holding only EXECUTE on the lease functions, and the fence
# a new coordinator starts with already waited out.  Options:
#   allows_streaming => 1   (to give it a standby)
#   single_server => 0|1    (default 1: no synchronous standby needed)
#   init => 'extra named arguments for initialize()', e.g. "worker_bits => 2"
#   conf => extra postgresql.conf lines
#   no_wait => 1            (do not wait out the initial fence)
sub snowid_coordinator_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $opts{allows_streaming} ? 1 : 0);
	$node->append_conf('postgresql.conf', $opts{conf}) if $opts{conf};
	$node->start;
	my $single = exists $opts{single_server} ? ($opts{single_server} ? 'true' : 'false') : 'true';
	my $extra = $opts{init} ? ", $opts{init}" : '';
	$node->safe_psql('postgres', qq{
CREATE EXTENSION snowid_coordinator;
SELECT snowid_coordinator.initialize(lease_time => '6s', safety_period => '2s',
	lease_margin => '1s', single_server => $single$extra);
CREATE ROLE snowid_node LOGIN;
GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_node;
GRANT EXECUTE ON FUNCTION snowid_coordinator.lease_acquire_v2,
	snowid_coordinator.lease_renew_v2, snowid_coordinator.lease_acquire_v1,
	snowid_coordinator.lease_renew_v1, snowid_coordinator.lease_release_v1
	TO snowid_node;
});
	# A new coordinator grants nothing for a lease plus the safety period.
	sleep 8.5 unless $opts{no_wait};
	return $node;
}

# libpq conninfo for nodes to reach one or more coordinators (multi-host,
# read-write target, as a user would configure a failover pair).
sub coordinator_conninfo
{
	my @coordinators = @_;
	my $hosts = join(',', map { $_->host } @coordinators);
	my $ports = join(',', map { $_->port } @coordinators);
	return "host=$hosts port=$ports dbname=postgres user=snowid_node "
	  . "target_session_attrs=read-write";
}

# A node (initialised, not started) that leases from the coordinator(s);
# extra postgresql.conf lines in $opts{conf}; $opts{conninfo} overrides.
sub snowid_remote_node
{
	my ($name, $coordinators, %opts) = @_;
	my @c = ref $coordinators eq 'ARRAY' ? @$coordinators : ($coordinators);
	my $conninfo = $opts{conninfo} // coordinator_conninfo(@c);
	my $conf = "snowid.coordinator = '$conninfo'\n" . ($opts{conf} // '');
	return snowid_node($name, %opts, conf => $conf);
}

# --- server processes, and ids as clients saw them ----------------------

push @EXPORT, qw(server_pids signal_server wait_for_pids_gone
  start_id_reader finish_id_reader store_ids);

# The postmaster's pid (from postmaster.pid) and the pids of its
# children, postmaster first.  Empty if the server is not running.
sub server_pids
{
	my ($node) = @_;
	open my $fh, '<', $node->data_dir . '/postmaster.pid' or return ();
	chomp(my $pm = <$fh>);
	close $fh;
	return () unless $pm =~ /^\d+$/ && kill(0, $pm);
	my $children = `pgrep -P $pm`;
	return ($pm, grep { /^\d+$/ } split /\s+/, $children);
}

# Send $signal (e.g. 'STOP', 'CONT') to the postmaster and every one of
# its children.  For STOP the postmaster goes first, so it forks nothing
# after its children were listed; for CONT it goes last.  Returns the
# pids signalled.
sub signal_server
{
	my ($node, $signal) = @_;
	my @pids;
	if ($signal eq 'CONT')
	{
		@pids = server_pids($node);
		kill($signal, reverse @pids);
	}
	else
	{
		my ($pm) = server_pids($node);
		return () unless $pm;
		kill($signal, $pm);
		@pids = server_pids($node);
		kill($signal, @pids[ 1 .. $#pids ]);
	}
	return @pids;
}

# Wait (up to $timeout seconds, default 30) until none of @$pids exists.
sub wait_for_pids_gone
{
	my ($pids, $timeout) = @_;
	$timeout //= 30;
	my $deadline = Time::HiRes::time() + $timeout;
	while (Time::HiRes::time() < $deadline)
	{
		return 1 unless grep { kill(0, $_) } @$pids;
		usleep(50_000);
	}
	note('still running: ' . join(' ', grep { kill(0, $_) } @$pids));
	return 0;
}

# Start a psql session that prints ids to its stdout: $rounds rounds of
# snowid_generate($batch) and one snowid_nextval(), each round its own
# statements, with a 2 ms pause.  Ids reach the test as the client sees
# them, committed or not, so a crash loses none of them.  It stops at the
# first error.
sub start_id_reader
{
	my ($node, $rounds, $batch) = @_;
	$batch //= 20;
	my $file = $node->basedir . "/id_reader_" . int(rand(1e9)) . ".sql";
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh "SELECT snowid_generate($batch); SELECT snowid_nextval(); "
	  . "SELECT pg_sleep(0.002);\n"
	  for 1 .. $rounds;
	close $fh;
	my %r = (stdout => '', stderr => '');
	$r{run} = IPC::Run::start(
		[ $node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1',
		  '-d', $node->connstr('postgres'), '-f', $file ],
		'<', \undef, '>', \$r{stdout}, '2>', \$r{stderr},
		IPC::Run::timeout(180));
	return \%r;
}

# Wait for an id reader to end (or kill it); return the ids it printed.
sub finish_id_reader
{
	my ($r) = @_;
	eval { $r->{run}->finish; 1 } or eval { $r->{run}->kill_kill };
	$r->{rc} = eval { $r->{run}->result(0) } // -1;
	return grep { /^\d+$/ } split /\n/, $r->{stdout};
}

# Store @$ids in snowid_gen_ids under $phase (through a file and \copy).
sub store_ids
{
	my ($node, $phase, $ids) = @_;
	my $file = $node->basedir . "/ids_$phase.txt";
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh "$phase\t$_\n" for @$ids;
	close $fh;
	$node->safe_psql('postgres',
		"\\copy snowid_gen_ids (phase, id) FROM '$file'");
	return scalar @$ids;
}

# --- failover, partition, clock and restore suites (044-047) -------------

push @EXPORT, qw(wait_until_unfenced start_tcp_proxy stop_tcp_proxy
  cluster_ids count_duplicates worker_runs);

# Wait (up to $timeout seconds, default 30) until the coordinator's fence
# is over, so that it grants leases again.
sub wait_until_unfenced
{
	my ($coord, $timeout) = @_;
	return poll_until($coord,
		'SELECT fenced_until IS NULL OR fenced_until < now() FROM snowid_coordinator.settings',
		't', $timeout // 30);
}

# A TCP proxy on loopback: socat listening on 127.0.0.1:$listen_port,
# forwarding each connection (one forked socat each) to
# 127.0.0.1:$target_port.  Returns once it accepts connections.
sub start_tcp_proxy
{
	my ($listen_port, $target_port, $log) = @_;
	$log //= '/dev/null';
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log;
		open STDERR, '>>', $log;
		exec('socat', "TCP-LISTEN:$listen_port,bind=127.0.0.1,reuseaddr,fork",
			"TCP:127.0.0.1:$target_port")
		  or die "exec socat: $!";
	}
	require IO::Socket::INET;
	for (1 .. 100)
	{
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
			PeerPort => $listen_port, Proto => 'tcp', Timeout => 1);
		if ($s) { close $s; last; }
		usleep(50_000);
	}
	return { pid => $pid, listen_port => $listen_port };
}

# Kill a proxy with SIGKILL: first the listening socat (so it forks no
# more), then every per-connection child, so that established connections
# through it break too.  Returns the pids killed.
sub stop_tcp_proxy
{
	my ($proxy) = @_;
	my $pid = $proxy->{pid};
	my @children = grep { /^\d+$/ } split /\s+/, `pgrep -P $pid`;
	kill 'KILL', $pid;
	kill 'KILL', @children if @children;
	waitpid($pid, 0);
	return ($pid, @children);
}

# Every id stored in snowid_gen_ids on each of @$nodes, as a list of
# [ id, worker, node name, phase ].
sub cluster_ids
{
	my ($nodes) = @_;
	my @all;
	foreach my $node (@$nodes)
	{
		my $out = $node->safe_psql('postgres',
			'SELECT id, snowid_worker(id), phase FROM snowid_gen_ids');
		foreach my $line (split /\n/, $out)
		{
			my ($id, $worker, $phase) = split /\|/, $line;
			push @all, [ $id, $worker, $node->name, $phase ];
		}
	}
	return \@all;
}

# How many ids in @$ids (from cluster_ids) were issued more than once.
sub count_duplicates
{
	my ($ids) = @_;
	my %seen;
	my $dups = 0;
	foreach my $r (@$ids)
	{
		$dups++ if $seen{ $r->[0] }++;
	}
	return $dups;
}

# Per worker id, the ids of @$ids in id order cut into runs by the node
# that issued them: { worker => [ [ node, count, min id, max id ], ... ] }.
# Two owners of one worker id that kept to the floor never interleave, so
# a worker id has at most one run per grant of it.
sub worker_runs
{
	my ($ids) = @_;
	my %by_worker;
	push @{ $by_worker{ $_->[1] } }, $_ for @$ids;
	my %runs;
	foreach my $w (keys %by_worker)
	{
		my @sorted = sort { $a->[0] <=> $b->[0] } @{ $by_worker{$w} };
		my @r;
		foreach my $x (@sorted)
		{
			if (@r && $r[-1][0] eq $x->[2])
			{
				$r[-1][1]++;
				$r[-1][3] = $x->[0];
			}
			else
			{
				push @r, [ $x->[2], 1, $x->[0], $x->[0] ];
			}
		}
		$runs{$w} = \@r;
	}
	return \%runs;
}

push @EXPORT, qw(probe_grant);

# Ask the coordinator for a lease directly (as a superuser, with its own
# layout and a new token) and return the status it answers.  Use it only
# where a grant is expected to be refused: a granted probe holds a worker
# id until it expires.
sub probe_grant
{
	my ($coord, $name) = @_;
	$name //= 'probe';
	return $coord->safe_psql('postgres', qq{
SELECT a.status
  FROM snowid_coordinator.settings s,
	   LATERAL snowid_coordinator.lease_acquire_v1(gen_random_uuid(), '$name',
		s.timestamp_bits, s.worker_bits, s.region_bits, s.sequence_bits,
		s.epoch_ms, NULL, snowid_coordinator.now_ms()) a});
}

push @EXPORT, qw(restart_keeper_for_faketime);

# libfaketime does not reach a process that the postmaster forks from a
# signal handler: PostgreSQL 15's postmaster runs its handlers while it
# waits in select(), which libfaketime wraps with faking turned off (a
# per-thread flag), and a child forked then keeps the flag for good.  The
# lease keeper is such a child at start-up (the postmaster starts
# background workers from its SIGCHLD handler once recovery ends).  Cancel
# it (it exits without releasing its lease) so that the postmaster starts a
# new one from its main loop, where libfaketime works; the new keeper
# resumes the lease from shared memory.  Call with the node's clock offset
# at +0.  Returns true once a new keeper has the node active again.
sub restart_keeper_for_faketime
{
	my ($node, $timeout) = @_;
	my $old = $node->safe_psql('postgres', 'SELECT keeper_pid FROM snowid_status()');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($old)");
	return poll_until($node,
		"SELECT keeper_pid <> $old AND state = 'active' FROM snowid_status()",
		't', $timeout // 20);
}
