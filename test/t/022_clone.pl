# A base backup of a local-mode node started as a server of its own (same
# system identifier, same timeline) must not generate while it cannot know
# that the original is gone: it refuses until an operator confirms, and
# then issues nothing the original issued.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $orig = snowid_node('orig', allows_streaming => 1);
$orig->start;
$orig->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($orig, 'active'), 'original node has a lease');
$orig->safe_psql('postgres', 'SELECT snowid_nextval()');
$orig->backup('b');

# Start the copy once the lease row copied into it has expired plus the
# safety period (6 s + 2 s in tests): a naive node would take worker id 0.
sleep 9;
my $clone = PostgreSQL::Test::Cluster->new('clone');
$clone->init_from_backup($orig, 'b');
$clone->start;
is( $clone->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'),
	$orig->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'),
	'the copy runs on the same timeline as the original');
ok(wait_for_state($clone, 'unfenced_copy'), 'the copy refuses: unfenced_copy');
my ($rc, $out, $err) = $clone->psql('postgres', 'SELECT snowid_nextval()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000.*refuses to generate on a copy of another server/s,
	'snowid_nextval() on the copy fails with 55000');
like($err, qr/snowid_confirm_takeover/, 'the hint names the way out');
is( $clone->safe_psql('postgres',
		"SELECT count(*) FROM snowid_coordinator.events WHERE event = 'copy_detected'"),
	'1', 'the copy recorded that it was started from a base backup');

# A restart of the copy does not forget it.
$clone->restart;
ok(wait_for_state($clone, 'unfenced_copy'), 'still unfenced after a restart');

# The original goes on generating meanwhile.
my $before = $orig->safe_psql('postgres',
	'SELECT string_agg(x::text, \',\') FROM snowid_generate(20000) x');
my %orig_ids = map { $_ => 1 } split /,/, $before;
is(scalar(keys %orig_ids), 20000, 'the original generates');

# The operator stops the original and confirms.
my $orig_high_water = $orig->safe_psql('postgres',
	'SELECT high_water FROM snowid_status()');
$orig->stop('immediate');
$clone->safe_psql('postgres', 'SELECT snowid_confirm_takeover()');
ok(wait_for_state($clone, 'active'), 'the copy generates after confirmation');
ok( $clone->safe_psql('postgres',
		"SELECT floor >= '$orig_high_water'::timestamptz FROM snowid_status()") eq 't',
	'its floor lies at or above the original\'s high-water mark');
my $after = $clone->safe_psql('postgres',
	'SELECT string_agg(x::text, \',\') FROM snowid_generate(20000) x');
my @new = split /,/, $after;
is(scalar(grep { $orig_ids{$_} } @new), 0, 'no id of the copy was issued by the original');
my $max_orig = (sort { $a <=> $b } keys %orig_ids)[-1];
ok((sort { $a <=> $b } @new)[0] > $max_orig, 'every new id is above every id of the original');

# Confirmed once; a restart keeps it confirmed.
$clone->restart;
ok(wait_for_state($clone, 'active'), 'active after a restart without a new confirmation');

$clone->stop;
done_testing();
