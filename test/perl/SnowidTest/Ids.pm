# Ids for snowid's TAP suites: generating them (in one session, in a
# background generator, or printed to a client as it sees them), storing
# them, and the checks every fault suite makes on them: no id twice, and
# for one worker id, every later owner's ids above the earlier ones'.
#
# Generated ids go into snowid_gen_ids (no unique constraint, so that a
# duplicate shows up as a count instead of stopping the generator), tagged
# with a phase.  Refusals seen by a background generator go into
# snowid_gen_errors; a row in snowid_gen_stop ends that generator.
# Everything lives in database postgres, which needs CREATE EXTENSION
# snowid first.
#
# SnowidTest re-exports everything here; tests say "use SnowidTest;".
package SnowidTest::Ids;

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

use SnowidTest::Node qw(poll_until);

use Exporter 'import';
our @EXPORT = qw(create_id_tables generate_ids start_generator stop_generator
  wait_for_ids start_id_reader finish_id_reader store_ids
  check_ids cluster_ids count_duplicates worker_runs);

# ---- generating and storing ----

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
# Its application_name is "snowid_gen_$phase".  The session is killed if
# it is still there timeout_default seconds after its own end.
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
		'2>', \$gen{stderr},
		IPC::Run::timeout($seconds + $PostgreSQL::Test::Utils::timeout_default));
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

# Wait until at least $n ids of $phase (stored after $since, a
# timestamptz literal, if given) are stored.
sub wait_for_ids
{
	my ($node, $phase, $n, $since) = @_;
	my $cond = $since ? " AND at > '$since'" : '';
	return poll_until($node,
		"SELECT count(*) >= $n FROM snowid_gen_ids WHERE phase = '$phase'$cond",
		't');
}

# Start a psql session that prints ids to its stdout: $rounds rounds of
# snowid_generate($batch) and one snowid_nextval(), each round its own
# statements, with a 2 ms pause.  Ids reach the test as the client sees
# them, committed or not, so a crash loses none of them.  It stops at the
# first error, and is killed after timeout_default seconds.
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
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
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

# ---- checks ----

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

1;
