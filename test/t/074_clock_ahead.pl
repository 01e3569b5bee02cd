# One clock bound, the coordinator's.  A node misconfigured with a large
# snowid.max_clock_offset (1 hour), whose clock then runs 10 minutes ahead
# (libfaketime), must not issue ids with future timestamps: the
# coordinator's bound (1 s) is what counts, the keeper judges the clock
# before generation starts, and what it judged survives a keeper restart.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $coord = snowid_coordinator_node('coord_ahead');
my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
my $node = snowid_remote_node('ahead', $coord,
	conf => "snowid.max_clock_offset = '1h'\n");
start_with_faketime($node, $clock);
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'active with the clock right');
ok(restart_keeper_for_faketime($node), 'the keeper runs under libfaketime');
create_id_tables($node);

# Ten minutes ahead: backends and keeper alike.
set_clock_offset($clock, '+600');
my $gen = start_generator($node, 'ahead', seconds => 60);
ok(wait_for_state($node, 'clock_offset', 30), 'the node refuses: clock_offset');
my $offset = $node->safe_psql('postgres', 'SELECT clock_offset_ms FROM snowid_status()');
cmp_ok(abs($offset), '>', 500_000, "it reports the offset ($offset ms)");
like($node->safe_psql('postgres', 'SELECT detail FROM snowid_status()'),
	qr/allows 1000 ms/, "the detail names the coordinator's bound, not the node's setting");

# A keeper restarted now keeps refusing.
my $old = $node->safe_psql('postgres', 'SELECT keeper_pid FROM snowid_status()');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($old)");
ok(poll_until($node, "SELECT keeper_pid <> $old FROM snowid_status()", 't', 20),
	'the keeper was restarted');
my $became_active = 0;
for (1 .. 40)
{
	$became_active = 1 if snowid_state($node) eq 'active';
	select(undef, undef, undef, 0.25);
}
ok(!$became_active, 'a restarted keeper does not resume generation with the clock still off');
stop_generator($node, $gen);

# No id beyond the coordinator's clock plus its bound.
my $coord_now = $coord->safe_psql('postgres', 'SELECT snowid_coordinator.now_ms()');
my $top = $node->safe_psql('postgres', q{
SELECT coalesce(round(extract(epoch FROM max(snowid_timestamp(id))) * 1000)::bigint, 0)
  FROM snowid_gen_ids});
cmp_ok($top, '<=', $coord_now + 1000,
	"no id carries a timestamp beyond the coordinator's clock + 1 s (latest $top, coordinator $coord_now)");

# A grant asked with that clock is refused by the coordinator itself.
my $status = $coord->safe_psql('postgres', q{
SELECT a.status FROM snowid_coordinator.settings s,
  LATERAL snowid_coordinator.lease_acquire_v2(gen_random_uuid(), 'probe',
	s.timestamp_bits, s.worker_bits, s.region_bits, s.sequence_bits, s.epoch_ms,
	NULL, snowid_coordinator.now_ms() + 600000) a});
is($status, 'clock_offset', 'the coordinator refuses a grant to a clock 10 minutes ahead');

# Back in time: generation resumes by itself.
set_clock_offset($clock, '+0');
ok(wait_for_state($node, 'active', 40), 'with the clock right again the node resumes');
$node->stop;
$coord->stop;
done_testing();
