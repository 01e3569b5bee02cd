# Failure behaviour 3: the coordinator is unavailable for longer than the
# lease.
#
# (a) down (stopped): the nodes generate until their lease would expire,
#     then refuse with SQLSTATE 57P03, "lease on worker id N expired",
#     the coordinator named as unreachable; no id carries a timestamp
#     after the local expiry (the last renewal plus the lease) or above
#     the high-water mark; when the coordinator returns the nodes resume
#     without a restart, with the same worker ids, above what they issued;
# (b) hung (its postmaster and every backend SIGSTOPped): the same, the
#     refusal comes within the lease although no connection fails
#     outright, and generation resumes after SIGCONT.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowidTest;

my $started_at = time;
my $lease_ms   = 6000;    # snowid_coordinator_node's lease

my $coord = snowid_coordinator_node('coord');
my $coord_stopped = 0;
# Never leave a stopped coordinator behind: the harness could not stop it.
END { signal_server($coord, 'CONT') if $coord && $coord_stopped; }

my @nodes;
foreach my $name ('down1', 'down2')
{
	my $node = snowid_remote_node($name, $coord);
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
	create_id_tables($node);
	push @nodes, $node;
}
my %worker;
foreach my $node (@nodes)
{
	ok(wait_for_state($node, 'active'), $node->name . ': holds a lease');
	$worker{ $node->name } = $node->safe_psql('postgres',
		'SELECT worker_id FROM snowid_status()');
	generate_ids($node, 'start', 500);
}
isnt($worker{down1}, $worker{down2}, 'distinct worker ids');

# The node's lease as it stands: worker id, last renewal, high-water
# mark, last used (all times as Unix ms), state and detail.
sub lease_status
{
	my ($node) = @_;
	my @f = split /\|/, $node->safe_psql('postgres', q{
SELECT worker_id,
	   floor(extract(epoch FROM last_renewal) * 1000)::bigint,
	   floor(extract(epoch FROM high_water) * 1000)::bigint,
	   floor(extract(epoch FROM last_used) * 1000)::bigint,
	   state, detail
  FROM snowid_status()});
	my %s;
	@s{qw(worker renewal_ms high_water_ms last_used_ms state detail)} = @f;
	return \%s;
}

# While generators run on every node, make the coordinator unavailable
# with $outage; check that each node refuses once its lease runs out and
# issued nothing after; end the outage with $recover; check that the
# nodes resume without a restart.
sub outage
{
	my ($label, $outage, $recover) = @_;
	my %gen;
	foreach my $node (@nodes)
	{
		$gen{ $node->name } = start_generator($node, $label, seconds => 45, batch => 20);
		ok(wait_for_ids($node, $label, 200), $node->name . ": $label: generating");
	}
	my %offset = map { $_->name => log_offset($_) } @nodes;
	my $mark = $coord->safe_psql('postgres',
		'SELECT max(event_id) FROM snowid_coordinator.events');
	my $t0 = time;
	$outage->();
	my $t1 = time;

	foreach my $node (@nodes)
	{
		my $name = $node->name;
		ok(poll_until($node,
				"SELECT state = 'expired' FROM snowid_status()", 't', 20),
			"$name: $label: the lease expires");
		my $s = lease_status($node);
		note(sprintf('%s: %s: expired %.1f s after the outage began; last renewal %d ms before it',
			$name, $label, time - $t0, int($t0 * 1000) - $s->{renewal_ms}));
		is($s->{worker}, $worker{$name}, "$name: $label: the worker id is kept while expired");
		like($s->{detail}, qr/coordinator unreachable: /,
			"$name: $label: the state's detail names the coordinator as unreachable");
		cmp_ok($s->{renewal_ms}, '<=', int($t1 * 1000) + 1,
			"$name: $label: no renewal succeeded during the outage");

		# Refusals: both ways of generating, SQLSTATE 57P03.
		foreach my $call ('snowid_nextval()', 'snowid_generate(10)')
		{
			my ($state, $message, $err) = psql_error($node, 'postgres', "SELECT $call");
			is($state, '57P03', "$name: $label: $call refused with 57P03");
			like($message, qr/^snowid lease on worker id $worker{$name} expired$/,
				"$name: $label: the message says the lease expired");
			like($err, qr/DETAIL:\s+(No renewal was confirmed before the lease expired\. Last error: )?coordinator unreachable: /,
				"$name: $label: the error's detail names the coordinator as unreachable");
		}

		# Nothing issued after the local expiry: every id this lease ever
		# issued (last_used is the generator's shared word) lies at or
		# before the last renewal plus the lease (the lease runs from
		# before the renewal was sent) and at or below the high-water mark.
		usleep(500_000);
		my $again = lease_status($node);
		is($again->{last_used_ms}, $s->{last_used_ms},
			"$name: $label: nothing issued while expired");
		my $expiry_ms = $s->{renewal_ms} + $lease_ms;
		cmp_ok($s->{last_used_ms}, '<=', $expiry_ms,
			"$name: $label: last used timestamp is not after the last renewal plus the lease");
		cmp_ok($s->{last_used_ms}, '<=', $s->{high_water_ms},
			"$name: $label: last used timestamp is not above the high-water mark");
		my $max_stored = $node->safe_psql('postgres', qq{
SELECT floor(extract(epoch FROM snowid_timestamp(max(id))) * 1000)::bigint
  FROM snowid_gen_ids WHERE phase = '$label'});
		cmp_ok($max_stored, '<=', $s->{last_used_ms},
			"$name: $label: no stored id above the last used timestamp");
		# ... and generation went on until the lease was about to run out.
		cmp_ok($max_stored, '>=', $expiry_ms - 2000,
			"$name: $label: generation went on until shortly before the expiry ("
			  . ($expiry_ms - $max_stored) . ' ms before)');
		is($node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE sqlstate <> '57P03') || '|' || (count(*) > 0)::text
  FROM snowid_gen_errors WHERE phase = '$label'}), '0|true',
			"$name: $label: the generator was refused, with 57P03 only");
		my $first_refusal_ms = $node->safe_psql('postgres', qq{
SELECT floor(extract(epoch FROM min(at)) * 1000)::bigint
  FROM snowid_gen_errors WHERE phase = '$label'});
		cmp_ok($first_refusal_ms, '<=', $expiry_ms + 1000,
			"$name: $label: the generator was refused within the lease ("
			  . ($first_refusal_ms - $expiry_ms) . ' ms after the expiry)');
		like(slurp_file($node->logfile, $offset{$name}),
			qr/snowid lease on worker id $worker{$name} expired; generation stopped/,
			"$name: $label: the keeper logs the expiry");
	}

	my $back_at = $nodes[0]->safe_psql('postgres', 'SELECT clock_timestamp()');
	$recover->();
	foreach my $node (@nodes)
	{
		my $name = $node->name;
		ok(poll_until($node, "SELECT state = 'active' FROM snowid_status()", 't', 40),
			"$name: $label: active again once the coordinator answers");
		is($node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()'),
			$worker{$name}, "$name: $label: the same worker id");
		like(slurp_file($node->logfile, $offset{$name}),
			qr/snowid lease keeper confirmed worker id $worker{$name} again; generation resumes/,
			"$name: $label: the keeper logs the recovery");
		ok(wait_for_ids($node, $label, 200, $back_at),
			"$name: $label: the running generator stores ids again");
		stop_generator($node, $gen{$name});
		generate_ids($node, "after_$label", 500);
		cmp_ok(check_ids($node, "$name: $label", [ 'start', $label ], ["after_$label"]),
			'>', 0, "$name: $label: later ids of the same lease are above the earlier ones");
		is($node->safe_psql('postgres', 'SELECT count(*) FROM snowid_gen_ids WHERE snowid_worker(id) <> '
			  . $worker{$name}), '0', "$name: $label: one worker id throughout");
	}
	is($coord->safe_psql('postgres', qq{
SELECT count(*) FROM snowid_coordinator.events WHERE event = 'grant' AND event_id > $mark}),
		'0', "$label: no new grant: the nodes renewed their old leases");
	return;
}

# (a) the coordinator is stopped for longer than the lease.
outage('down',
	sub { $coord->stop; },
	sub { $coord->start; });

# (b) the coordinator hangs: postmaster and every backend SIGSTOPped.
outage('hung',
	sub {
		my @pids = signal_server($coord, 'STOP');
		$coord_stopped = 1;
		cmp_ok(scalar(@pids), '>', 3,
			'hung: the coordinator\'s postmaster and ' . (@pids - 1) . ' children stopped');
	},
	sub {
		signal_server($coord, 'CONT');
		$coord_stopped = 0;
	});

# Ids of both nodes together: none twice.
my %seen;
my $dups = 0;
foreach my $node (@nodes)
{
	$dups += !!$seen{$_}++
	  for split /\n/, $node->safe_psql('postgres', 'SELECT id FROM snowid_gen_ids');
}
is($dups, 0, scalar(keys %seen) . ' ids from both nodes, none twice');

$_->stop for @nodes;
$coord->stop;
note(sprintf('042_coordinator_down took %.1f s', time - $started_at));
done_testing();
