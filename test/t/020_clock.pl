# Clock faults: the wall clock of a running server is stepped back with
# libfaketime.
#
# The postmaster (and so every server process) runs with libfaketime
# preloaded, CLOCK_MONOTONIC left alone (FAKETIME_DONT_FAKE_MONOTONIC), and
# a CLOCK_REALTIME offset reread from a file at every clock read
# (FAKETIME_TIMESTAMP_FILE with FAKETIME_NO_CACHE=1).  Offsets are relative
# seconds with a '.' fraction, so '-0.040' is 40 ms back.
#
#  (a) A step back of 40 ms, less than snowid.max_clock_wait (50 ms here):
#      snowid_nextval() waits and succeeds, ids stay strictly increasing,
#      snowid_stats.clock_rollback_waits goes up; then the same for
#      snowid_generate().  The step is made by the generating backend
#      itself (COPY to the offset file) between two batches, so that the
#      last used timestamp is surely ahead of the stepped clock (the step
#      leaves 39 ms for the backend to get from one batch to the next).
#  (b) A step back of 3 s: snowid_nextval() refuses (55000, "system clock
#      moved backwards"), clock_rollback_refusals counts every refusal,
#      snowid_status() records the regression, and generation resumes by
#      itself once the clock passes the last used timestamp, with ids above
#      every earlier one.  Then the clock is set right again (a step
#      forward) and generation goes on.
# No id is ever issued twice.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use SnowidTest;

plan skip_all => 'libfaketime is not installed (Debian package libfaketime)'
  unless faketime_lib();

my $node = snowid_node(
	'clock',
	conf => "snowid.max_clock_wait = '50ms'\n"
	  # ERROR and WARNING lines in the server log, for diagnosis
	  . "log_min_messages = warning\n");
my $clock_file = $node->basedir . '/faketime.rc';
set_clock_offset($clock_file, '+0');
start_with_faketime($node, $clock_file);

$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'node holds a lease');

# The server's clock minus the real one, in seconds.
sub server_offset
{
	my $before = time;
	my $server = $node->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $after = time;
	return $server - ($before + $after) / 2;
}

# Keep calling $sql until it succeeds (at most $timeout s).  Returns the
# seconds it took (undef on timeout) and the errors seen meanwhile, each
# as [ sqlstate, message ].
sub until_success
{
	my ($sql, $timeout) = @_;
	my $start = time;
	my @errors;
	while (time - $start < $timeout)
	{
		my ($state, $message) = psql_error($node, 'postgres', $sql);
		return (time - $start, \@errors) if $state eq '';
		push @errors, [ $state, $message ];
		sleep 0.1;
	}
	return (undef, \@errors);
}

sub stats
{
	my ($ids, $waits, $refusals, $no_lease) = split /\|/,
	  $node->safe_psql('postgres',
		'SELECT ids, clock_rollback_waits, clock_rollback_refusals, no_lease_refusals FROM snowid_stats'
	  );
	return {
		ids      => $ids,
		waits    => $waits,
		refusals => $refusals,
		no_lease => $no_lease
	};
}

# ---- libfaketime reaches the server and follows the file ----
set_clock_offset($clock_file, '-10');
my $offset = server_offset();
ok($offset > -11 && $offset < -9,
	"server clock follows the offset file (-10 s gives $offset s)")
  or die "libfaketime does not control the server clock; see the server log\n";
set_clock_offset($clock_file, '+0');
$offset = server_offset();
ok(abs($offset) < 1, "offset +0 gives the real time ($offset s)");

# The step forward back to +0 may outrun the lease's usable_until until
# the next renewal moves it on: wait until generation works.
my ($took, $errors) = until_success('SELECT snowid_nextval()', 15);
ok(defined $took, 'generation works after the clock check')
  or diag explain $errors;
note "generation resumed after the forward step in "
  . ($took // 'never') . " s; errors meanwhile: "
  . join(', ', map { $_->[0] } @$errors);

$node->safe_psql(
	'postgres', q{
CREATE TABLE ids (n bigserial PRIMARY KEY, id snowid NOT NULL, phase text NOT NULL);

-- Ids, then a step of the clock written by this very backend, then ids:
-- one snowid_nextval() per id, or snowid_generate() batches.
CREATE FUNCTION generate_around_step(p_phase text, p_file text, p_offset text,
									 p_before int, p_after int, p_batch bool)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF p_batch THEN
		INSERT INTO ids (id, phase)
		SELECT x, p_phase || ' before' FROM snowid_generate(p_before) x;
	ELSE
		INSERT INTO ids (id, phase)
		SELECT snowid_nextval(), p_phase || ' before' FROM generate_series(1, p_before);
	END IF;
	EXECUTE format('COPY (SELECT %L) TO %L', p_offset, p_file);
	IF p_batch THEN
		INSERT INTO ids (id, phase)
		SELECT x, p_phase || ' after' FROM snowid_generate(p_after) x;
	ELSE
		INSERT INTO ids (id, phase)
		SELECT snowid_nextval(), p_phase || ' after' FROM generate_series(1, p_after);
	END IF;
END $$;
});

# ---- (a) steps back of 40 ms: wait ----
# Each step is 40 ms on top of the previous one (offsets -0.040, -0.080).
my %small = (
	'small step'       => [ '-0.040', 0 ],
	'small batch step' => [ '-0.080', 1 ]);
for my $phase ('small step', 'small batch step')
{
	my ($step_to, $batch) = @{ $small{$phase} };
	my $how = $batch ? 'snowid_generate()' : 'snowid_nextval()';
	my $s0 = stats();
	my $t0 = time;
	$node->safe_psql('postgres',
		"SELECT generate_around_step('$phase', '$clock_file', '$step_to', 1000, 1000, "
		  . ($batch ? 'true' : 'false') . ')'
	);
	my $secs = time - $t0;
	my $s1 = stats();
	note "$phase: offset now $step_to s (measured " . server_offset()
	  . " s); batch took $secs s";
	cmp_ok($s1->{waits}, '>', $s0->{waits},
		"$phase: $how waited (clock_rollback_waits "
		  . "$s0->{waits} -> $s1->{waits})");
	is($s1->{refusals}, $s0->{refusals}, "$phase: nothing refused");
	is( $node->safe_psql(
			'postgres', "SELECT count(*) FROM ids WHERE phase LIKE '$phase %'"),
		'2000',
		"$phase: all 2000 ids issued");
	is( $node->safe_psql(
			'postgres', qq{
SELECT (SELECT min(id) FROM ids WHERE phase = '$phase after') >
	   (SELECT max(id) FROM ids WHERE phase = '$phase before')}),
		't',
		"$phase: every id after the step is above every id before it");
}
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s
WHERE id <= prev}),
	'0',
	'small steps: ids strictly increasing across the steps');

# ---- (b) a step back of 3 s: refuse, then resume by itself ----
$node->safe_psql('postgres',
	q{INSERT INTO ids (id, phase) SELECT snowid_nextval(), 'big step before' FROM generate_series(1, 1000)}
);
my $max_before = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
my $s2 = stats();
set_clock_offset($clock_file, '-3');

my $refused_from = time;
my ($state, $message, $stderr) =
  psql_error($node, 'postgres', 'SELECT snowid_nextval()');
my $refused_to = time;
is($state, '55000', 'big step: snowid_nextval() refused with SQLSTATE 55000')
  or diag $stderr;
like(
	$message,
	qr/^system clock moved backwards by \d+ ms/,
	'big step: the error says the clock moved backwards');
my ($behind) = $message =~ /by (\d+) ms/;
$behind //= -1;
ok($behind > 50 && $behind <= 3000,
	"big step: reported regression ($behind ms) is above max_clock_wait and at most the step"
);
like($stderr, qr/HINT:.*resumes by itself/,
	'big step: the hint says generation resumes by itself');

my ($reg_at, $reg_ms, $status_state) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT last_clock_regression IS NOT NULL, last_clock_regression_ms, state FROM snowid_status()'
  );
is($reg_at, 't', 'big step: snowid_status().last_clock_regression is set');
is($reg_ms, $behind,
	'big step: snowid_status().last_clock_regression_ms is the reported regression');
note "state while the clock is behind: $status_state";
$offset = server_offset();
ok($offset > -4 && $offset < -2, "server clock is 3 s behind ($offset s)");

# Now keep trying: refusals until the clock passes the last used
# timestamp, then ids again, without anybody touching the clock.
($took, $errors) = until_success(
	q{INSERT INTO ids (id, phase) SELECT snowid_nextval(), 'big step after'},
	15);
my $resumed_at = time;
ok(defined $took, 'big step: generation resumed by itself')
  or diag explain $errors;
# The first refusal found the clock $behind ms behind the last used
# timestamp at some moment during its call: generation cannot resume
# before that much time has passed since the call began.
note sprintf(
	'big step: resumed %.2f s after the first refusal (%d ms behind), after %d more refusals',
	$resumed_at - $refused_from, $behind, scalar(@$errors));
cmp_ok($resumed_at - $refused_from, '>=', $behind / 1000 - 0.002,
	'big step: no id while the clock was behind the last used timestamp');
cmp_ok($resumed_at - $refused_from, '<', $behind / 1000 + 5,
	'big step: resumed soon after the clock passed it');
is(scalar(grep { $_->[0] ne '55000' || $_->[1] !~ /^system clock moved backwards/ } @$errors),
	0, 'big step: every failure meanwhile was a clock refusal')
  or diag explain $errors;
my $s3 = stats();
is($s3->{refusals} - $s2->{refusals},
	1 + scalar(@$errors),
	'big step: clock_rollback_refusals counts every refusal ('
	  . "$s2->{refusals} -> $s3->{refusals})");
is($s3->{no_lease}, $s2->{no_lease}, 'big step: no refusal for lack of a lease');

$node->safe_psql('postgres',
	q{INSERT INTO ids (id, phase) SELECT snowid_nextval(), 'big step after' FROM generate_series(1, 999)}
);
is( $node->safe_psql(
		'postgres',
		"SELECT min(id) > '$max_before'::snowid FROM ids WHERE phase = 'big step after'"
	),
	't',
	'big step: every id after resuming is above every id before the step');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM ids WHERE phase = 'big step after'}),
	'1000', 'big step: 1000 ids after resuming');

# ---- the clock is set right again (3 s forward) ----
set_clock_offset($clock_file, '+0');
($took, $errors) = until_success(
	q{INSERT INTO ids (id, phase) SELECT snowid_nextval(), 'clock right again' FROM generate_series(1, 1000)},
	15);
ok(defined $took, 'clock set right: generation goes on')
  or diag explain $errors;
note "clock set right: generation after "
  . ($took // 'never') . " s; errors meanwhile: "
  . join(', ', map { "$_->[0] $_->[1]" } @$errors);
is(scalar(grep { $_->[0] eq '55000' } @$errors),
	0, 'clock set right: a step forward is never taken for a step back');

# ---- the whole test: no duplicate, strictly increasing ----
is( $node->safe_psql(
		'postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
	't', 'no id issued twice over the whole test');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s
WHERE id <= prev}),
	'0',
	'ids strictly increasing over the whole test');
is( $node->safe_psql(
		'postgres', 'SELECT count(DISTINCT snowid_worker(id)) FROM ids'),
	'1', 'all ids from one worker id');

$node->stop;
done_testing();
