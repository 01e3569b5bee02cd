# Failure behaviour 6: clock faults in a cluster (libfaketime).
#
# A coordinator and two nodes, "faked" and "plain", in a pool of two
# worker ids (worker_bits = 1).  The coordinator and "faked" run with
# libfaketime preloaded: CLOCK_REALTIME offset read from a file at every
# clock read, CLOCK_MONOTONIC left alone.  Both nodes generate all along.
#
#  (a) faked's clock steps back 3 s: faked refuses (55000: the clock moved
#      backwards, then the clock watch finds it 3 s off the coordinator:
#      state clock_offset); plain is unaffected.  The clock is set right:
#      faked resumes with ids above its earlier ones.
#  (b) the clock watch: faked's clock steps 5 s forward, beyond
#      snowid.max_clock_offset (1 s by default): state clock_offset,
#      refusals with 55000, snowid_status().clock_offset_ms near -5000,
#      a 'clock_offset' event at the coordinator.  Set right, it resumes.
#      Then a step of 1.6 s, beyond the bound too: caught the same way.
#  (c) the coordinator's clock steps 20 s forward (past lease + safety)
#      under load.  The nodes' clock watch is relaxed here
#      (snowid.max_clock_offset = 60s) so that only the floor stands
#      between the nodes and a duplicate: every lease renewed before the
#      step looks long expired to the coordinator, so a third node,
#      "late", takes a worker id that a running node still holds.  That
#      node loses its lease at its next renewal; late's ids must lie above
#      everything the old owner issued.  Then the coordinator's clock is
#      set right.
# faked's lease keeper is restarted once at the start: libfaketime does not
# reach the keeper the postmaster started (see restart_keeper_for_faketime).
# Over the whole test no id is issued twice, and the ids of each worker id
# form at most one run per grant of it (two owners never interleave).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use SnowidTest;

plan skip_all => 'libfaketime is not installed (Debian package libfaketime)'
  unless faketime_lib();

my $t_start = time;
my $node_conf = "snowid.worker_bits = 1\nlog_min_messages = warning\n";

my $coord = snowid_coordinator_node('coord', init => 'worker_bits => 1', no_wait => 1);
$coord->stop;
my $coord_clock = $coord->basedir . '/faketime.rc';
set_clock_offset($coord_clock, '+0');
start_with_faketime($coord, $coord_clock);

my $faked = snowid_remote_node('faked', $coord, conf => $node_conf);
my $faked_clock = $faked->basedir . '/faketime.rc';
set_clock_offset($faked_clock, '+0');
start_with_faketime($faked, $faked_clock);
my $plain = snowid_remote_node('plain', $coord, conf => $node_conf);
$plain->start;
my $late = snowid_remote_node('late', $coord,
	conf => $node_conf . "snowid.max_clock_offset = '60s'\n");

foreach my $node ($faked, $plain)
{
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	create_id_tables($node);
	# Refusals in the order stored: their "at" follows the node's faked clock.
	$node->safe_psql('postgres', 'ALTER TABLE snowid_gen_errors ADD COLUMN n bigserial');
}
ok(wait_until_unfenced($coord), 'the coordinator\'s initial fence is over');
ok(wait_for_state($_, 'active', 30), $_->name . ' holds a lease') for ($faked, $plain);
ok(restart_keeper_for_faketime($faked),
	'faked\'s lease keeper restarted, so that libfaketime reaches it');

# The server's clock minus the real one, in seconds.
sub server_offset
{
	my ($node) = @_;
	my $before = time;
	my $server = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
	my $after = time;
	return $server - ($before + $after) / 2;
}
set_clock_offset($faked_clock, '-10');
my $offset = server_offset($faked);
ok($offset > -11 && $offset < -9, "libfaketime moves faked's clock (-10 s gives $offset s)")
  or BAIL_OUT('libfaketime does not control the server clock');
set_clock_offset($faked_clock, '+0');
ok(abs(server_offset($faked)) < 1, 'faked\'s clock is right again');
ok(abs(server_offset($coord)) < 1, 'the coordinator\'s clock is right');
# That step may have stopped faked for a moment (its clock was off at a renewal).
ok(wait_for_state($faked, 'active', 20), 'faked is active');

my %gen = (
	faked => start_generator($faked, 'faked', seconds => 180),
	plain => start_generator($plain, 'plain', seconds => 180));
ok(wait_for_ids($_, $_->name, 1000), $_->name . ' generates') for ($faked, $plain);

# The last refusal stored by $node's generator so far.
sub last_error
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT coalesce(max(n), 0) FROM snowid_gen_errors');
}

# Refusals stored by $node's generator after refusal number $n0, as
# "n x sqlstate message".
sub errors_since
{
	my ($node, $n0) = @_;
	return $node->safe_psql('postgres', qq{
SELECT coalesce(string_agg(n || ' x ' || sqlstate || ' ' || message, '; '), '')
  FROM (SELECT sqlstate, regexp_replace(message, '[0-9]+', 'N', 'g') AS message, count(*) AS n
		  FROM snowid_gen_errors WHERE n > $n0 GROUP BY 1, 2) e});
}

# Wait until $node's generator stores ids again after $since.
sub generating_since
{
	my ($node, $since, $n) = @_;
	return wait_for_ids($node, $node->name, $n // 200, $since);
}

# ---- (a) faked's clock steps back 3 s ----
my $a_since = $plain->safe_psql('postgres', 'SELECT clock_timestamp()');
my %e_a = map { $_->name => last_error($_) } ($faked, $plain);
my $max_before_a = $faked->safe_psql('postgres', 'SELECT max(id) FROM snowid_gen_ids');
set_clock_offset($faked_clock, '-3');
my ($state, $message) = psql_error($faked, 'postgres', 'SELECT snowid_nextval()');
is($state, '55000', '(a) faked refuses after the step back (55000)');
note "(a) first refusal: $message";
ok(wait_for_state($faked, 'clock_offset', 10),
	'(a) the clock watch finds faked 3 s behind the coordinator');
my $offset_a = $faked->safe_psql('postgres', 'SELECT clock_offset_ms FROM snowid_status()');
ok($offset_a >= 2000 && $offset_a <= 4000,
	"(a) snowid_status().clock_offset_ms is about +3000 ($offset_a)");
($state, $message) = psql_error($faked, 'postgres', 'SELECT snowid_nextval()');
is($state, '55000', '(a) faked refuses in state clock_offset (55000)');
note "(a) refusal in state clock_offset: $message";
my $plain_ids_a = $plain->safe_psql('postgres',
	"SELECT count(*) FROM snowid_gen_ids WHERE at > '$a_since'");
set_clock_offset($faked_clock, '+0');
my $a_restored = $plain->safe_psql('postgres', 'SELECT clock_timestamp()');
ok(wait_for_state($faked, 'active', 20), '(a) faked is active again with its clock set right');
ok(generating_since($faked, $a_restored), '(a) faked generates again');
is($faked->safe_psql('postgres',
		"SELECT min(id) > '$max_before_a' FROM snowid_gen_ids WHERE at > '$a_restored'"),
	't', '(a) faked\'s new ids lie above its earlier ones');
my $faked_errors_a = errors_since($faked, $e_a{faked});
note "(a) faked was refused with: $faked_errors_a";
is( $faked->safe_psql(
		'postgres', "SELECT count(*) FROM snowid_gen_errors WHERE n > $e_a{faked} AND sqlstate <> '55000'"),
	'0',
	'(a) faked was refused only with 55000');
cmp_ok($plain_ids_a, '>', 0, "(a) plain generated meanwhile ($plain_ids_a ids)");
is(errors_since($plain, $e_a{plain}), '', '(a) plain was never refused');

# ---- (b) faked's clock steps 5 s forward: the clock watch ----
my $b_since = $plain->safe_psql('postgres', 'SELECT clock_timestamp()');
my %e_b = map { $_->name => last_error($_) } ($faked, $plain);
my $w_faked = $faked->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
set_clock_offset($faked_clock, '+5');
ok(wait_for_state($faked, 'clock_offset', 10),
	'(b) the clock watch finds faked 5 s ahead: state clock_offset');
my ($detail, $offset_b) = split /\|/, $faked->safe_psql('postgres',
	'SELECT detail, clock_offset_ms FROM snowid_status()');
note "(b) detail: $detail";
ok($offset_b < -1000, "(b) snowid_status().clock_offset_ms is beyond the bound ($offset_b)");
ok($offset_b >= -6000 && $offset_b <= -4000,
	"(b) snowid_status().clock_offset_ms is about -5000 ($offset_b)");
($state, $message) = psql_error($faked, 'postgres', 'SELECT snowid_nextval()');
is($state, '55000', '(b) faked refuses (55000)');
note "(b) refusal: $message";
ok( poll_until(
		$coord, qq{
SELECT count(*) > 0 FROM snowid_coordinator.events
WHERE event = 'clock_offset' AND worker_id = $w_faked AND at > '$b_since'::timestamptz},
		't', 10),
	'(b) a clock_offset event at the coordinator');
note '(b) event: ' . $coord->safe_psql('postgres',
	"SELECT detail FROM snowid_coordinator.events WHERE event = 'clock_offset' ORDER BY event_id DESC LIMIT 1");
my $plain_ids_b = $plain->safe_psql('postgres',
	"SELECT count(*) FROM snowid_gen_ids WHERE at > '$b_since'");
set_clock_offset($faked_clock, '+0');
my $b_restored = $plain->safe_psql('postgres', 'SELECT clock_timestamp()');
# Ids made in the seconds before the watch caught the step carry times
# up to 5 s ahead: faked resumes once its clock has passed them.
ok(wait_for_state($faked, 'active', 20), '(b) faked resumes with its clock set right');
ok(generating_since($faked, $b_restored), '(b) faked generates again');
note "(b) faked was refused with: " . errors_since($faked, $e_b{faked});
is( $faked->safe_psql(
		'postgres', "SELECT count(*) FROM snowid_gen_errors WHERE n > $e_b{faked} AND sqlstate NOT IN ('55000', '57P03')"),
	'0',
	'(b) faked was refused only with 55000 or 57P03');
cmp_ok($plain_ids_b, '>', 0, "(b) plain generated meanwhile ($plain_ids_b ids)");
is(errors_since($plain, $e_b{plain}), '', '(b) plain was never refused');

# ---- (b2) a smaller step forward, 1.6 s: still beyond the bound ----
my %e_b2 = map { $_->name => last_error($_) } ($faked, $plain);
set_clock_offset($faked_clock, '+1.6');
my $caught = wait_for_state($faked, 'clock_offset', 7);
my $offset_b2 = $faked->safe_psql('postgres', 'SELECT clock_offset_ms FROM snowid_status()');
note "(b2) faked's state: " . snowid_state($faked) . ", clock_offset_ms $offset_b2";
ok($caught, '(b2) the clock watch finds faked 1.6 s ahead: state clock_offset');
ok($offset_b2 <= -1400 && $offset_b2 >= -1800,
	"(b2) snowid_status().clock_offset_ms is about -1600 ($offset_b2)");
set_clock_offset($faked_clock, '+0');
my $b2_restored = $plain->safe_psql('postgres', 'SELECT clock_timestamp()');
ok(wait_for_state($faked, 'active', 20), '(b2) faked is active with its clock set right');
ok(generating_since($faked, $b2_restored), '(b2) faked generates again');
note "(b2) faked was refused with: " . errors_since($faked, $e_b2{faked});

# ---- (c) the coordinator's clock steps 20 s forward under load ----
# The one clock bound is the coordinator's (1.1): allow 60 s there, so
# that the nodes, 20 s behind it after the step, keep generating.
$coord->safe_psql('postgres', 'UPDATE snowid_coordinator.settings SET max_clock_offset_ms = 60000');
foreach my $node ($faked, $plain)
{
	$node->safe_psql('postgres', "ALTER SYSTEM SET snowid.max_clock_offset = '60s'");
	$node->reload;
}
# Let each keeper reread its configuration (it does so when it wakes up).
sleep 2.5;
my %worker = map { $_->name => $_->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()') }
  ($faked, $plain);
my $events_before = $coord->safe_psql('postgres',
	'SELECT max(event_id) FROM snowid_coordinator.events');

# late starts first and is refused: both worker ids are held.  Its keeper
# asks again every second.
$late->start;
$late->safe_psql('postgres', 'CREATE EXTENSION snowid');
create_id_tables($late);
$late->safe_psql('postgres', 'ALTER TABLE snowid_gen_errors ADD COLUMN n bigserial');
ok(poll_until($late, "SELECT state = 'no_free_worker' FROM snowid_status()", 't', 15),
	'(c) late is refused while the pool is full');

# Step the coordinator's clock just after faked renewed (its next renewal is
# 2 s away), so that late asks before faked renews again: faked's lease,
# valid for seconds more, then looks 14 s expired to the coordinator.
my $renewed_sql = "SELECT renewed_at FROM snowid_coordinator.leases WHERE worker_id = $worker{faked}";
my $renewed = $coord->safe_psql('postgres', $renewed_sql);
my $wait_until = time + 5;
while (time < $wait_until)
{
	last if $coord->safe_psql('postgres', $renewed_sql) ne $renewed;
	sleep 0.05;
}
my %e_c = map { $_->name => last_error($_) } ($faked, $plain);
set_clock_offset($coord_clock, '+20');
my $t_step = time;
ok(abs(server_offset($coord) - 20) < 1, '(c) the coordinator\'s clock is 20 s ahead');
# (held: active, or waiting for the clock to pass a fenced floor)
ok(poll_until($late, q{SELECT state IN ('active', 'floor_ahead') FROM snowid_status()}, 't', 40),
	'(c) late holds a lease although the pool was full');
my $t_late = time - $t_step;
my $w_late = $late->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
my ($victim) = grep { $worker{$_} eq $w_late } keys %worker;
ok(defined $victim, "(c) late took worker id $w_late from a running node ("
	  . ($victim // 'none') . sprintf(') %.1f s after the step', $t_late));
my $t_grant = $plain->safe_psql('postgres', 'SELECT clock_timestamp()');
$gen{late} = start_generator($late, 'late', seconds => 120);
my %node_of = (faked => $faked, plain => $plain);
if (defined $victim)
{
	# The victim's lease is still valid by its own clock: its renewal
	# witnesses the grant to late, and the coordinator takes the worker id
	# from both (1.1; in 1.0 late kept it and the victim lost it).
	ok(poll_until($coord, "SELECT count(*) > 0 FROM snowid_coordinator.events WHERE event = 'contested' AND worker_id = $w_late", 't', 15),
		"(c) ${victim}'s renewal of its still valid lease finds it granted to late: contested");
	ok(poll_until($node_of{$victim}, 'SELECT lease_losses >= 1 FROM snowid_stats', 't', 10),
		"(c) $victim learns it lost the lease");
}
sleep 3;
set_clock_offset($coord_clock, '+0');
my $c_restored = $plain->safe_psql('postgres', 'SELECT clock_timestamp()');
ok(abs(server_offset($coord)) < 1, '(c) the coordinator\'s clock is set right');
sleep 3;
note '(c) states: ' . join(', ', map { $_->name . ' ' . snowid_state($_) } ($faked, $plain, $late));
note '(c) grants since the step: ' . $coord->safe_psql('postgres', qq{
SELECT string_agg(worker_id || ' to ' || node_name, ', ' ORDER BY event_id)
  FROM snowid_coordinator.events WHERE event = 'grant' AND event_id > $events_before});
note "(c) $_ was refused with: " . errors_since($node_of{$_}, $e_c{$_}) for sort keys %node_of;
my $active = 0;
for (1 .. 300)
{
	# held: active, or waiting for the clock to reach a fenced floor (the
	# fence floor includes the coordinator's 60 s clock bound here)
	$active = grep { snowid_state($_) =~ /^(active|floor_ahead)$/ } ($faked, $plain, $late);
	last if $active == 2;
	sleep 0.2;
}
is($active, 2, '(c) two nodes hold the two worker ids');

# ---- the whole test ----
is(stop_generator($faked, $gen{faked}), 0, 'faked: generator ran to the end');
is(stop_generator($plain, $gen{plain}), 0, 'plain: generator ran to the end');
is(stop_generator($late, $gen{late}), 0, 'late: generator ran to the end');
my $ids = cluster_ids([ $faked, $plain, $late ]);
is(count_duplicates($ids), 0, scalar(@$ids) . ' ids, none issued twice');
my $runs = worker_runs($ids);
foreach my $w (sort keys %$runs)
{
	my $grants = $coord->safe_psql('postgres',
		"SELECT count(*) FROM snowid_coordinator.events WHERE event = 'grant' AND worker_id = $w");
	my @r = @{ $runs->{$w} };
	note "worker id $w: " . join(' -> ', map { "$_->[0] ($_->[1])" } @r) . "; $grants grants";
	cmp_ok(scalar(@r), '<=', $grants,
		"worker id $w: its ids form no more runs by owner than it had grants");
}
if (defined $victim)
{
	# late's ids with that worker id lie above every id the victim issued
	# with it before late's grant (late's floor was the victim's high-water
	# mark).
	my $victim_top = $node_of{$victim}->safe_psql('postgres',
		"SELECT coalesce(max(id)::bigint, 0) FROM snowid_gen_ids WHERE snowid_worker(id) = $w_late AND at < '$t_grant'");
	my $late_low = $late->safe_psql('postgres',
		"SELECT coalesce(min(id)::bigint, 0) FROM snowid_gen_ids WHERE snowid_worker(id) = $w_late");
	ok($late_low == 0 || $late_low > $victim_top,
		"(c) worker id $w_late: late's ids ($late_low and up) lie above $victim\'s before late's grant ($victim_top)");
}

$_->stop for ($faked, $plain, $late);
$coord->stop;
note sprintf('046_clock took %.1f s', time - $t_start);
done_testing();
