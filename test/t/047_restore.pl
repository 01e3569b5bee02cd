# Failure behaviour 10: the coordinator restored from a base backup taken
# before some grants.
#
# Node "anchor" holds a lease when a base backup of the coordinator is
# taken; node "cutoff" gets its lease after the backup, so the backup knows
# nothing of it.  Both generate.  The coordinator is then lost (immediate
# stop) and a new coordinator is started from the backup.  Started without
# recovery.signal, it ends crash recovery on the same timeline with the
# same system identifier, like the original.  cutoff cannot reach the
# restored coordinator (its conninfo names only the old one): it goes on
# generating until its lease runs out, as a partitioned node would, while
# a new node, "newcomer", asks the restored coordinator for a lease.  To
# the restored coordinator cutoff's worker id looks never used, so only a
# fence keeps it from handing that worker id out with a floor below ids
# cutoff is issuing.  The restored coordinator must fence itself: a
# 'fence' event, no grant for a lease plus the safety period, and a floor
# above every id issued before the restore.  anchor (its lease is in the
# backup) renews at the restored coordinator.  No id is issued twice.
#
# Then the same backup is restored with archive recovery (recovery.signal):
# recovery ends on a new timeline, and that coordinator fences itself too.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

use SnowidTest;

my $t_start = time;
my $conf = "log_min_messages = warning\n";

my $coord = snowid_coordinator_node('coord', allows_streaming => 1, no_wait => 1);
# Created now, so that their ports are known to the nodes' conninfo.
my $restored = PostgreSQL::Test::Cluster->new('coord_restored');
my $pitr = PostgreSQL::Test::Cluster->new('coord_pitr');

my $anchor = snowid_remote_node('anchor', [ $coord, $restored ], conf => $conf);
my $cutoff = snowid_remote_node('cutoff', [$coord], conf => $conf);
my $newcomer = snowid_remote_node('newcomer', [ $coord, $restored ], conf => $conf);

ok(wait_until_unfenced($coord), 'the coordinator\'s initial fence is over');
$anchor->start;
$anchor->safe_psql('postgres', 'CREATE EXTENSION snowid');
create_id_tables($anchor);
ok(wait_for_state($anchor, 'active', 30), 'anchor holds a lease');
my $g_anchor = start_generator($anchor, 'anchor', seconds => 120);
ok(wait_for_ids($anchor, 'anchor', 500), 'anchor generates');

# ---- the backup: anchor's lease is in it, cutoff's will not be ----
$coord->backup('before_grants');
$restored->init_from_backup($coord, 'before_grants');
$restored->append_conf('postgresql.conf', $conf);

$cutoff->start;
$cutoff->safe_psql('postgres', 'CREATE EXTENSION snowid');
create_id_tables($cutoff);
ok(wait_for_state($cutoff, 'active', 30), 'cutoff holds a lease (granted after the backup)');
my $w_cutoff = $cutoff->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
my $w_anchor = $anchor->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
my $g_cutoff = start_generator($cutoff, 'cutoff', seconds => 120);
ok(wait_for_ids($cutoff, 'cutoff', 500), 'cutoff generates');
ok(poll_until($cutoff, 'SELECT lease_renewals >= 1 FROM snowid_stats', 't', 10),
	'cutoff renewed its lease');
my $anchor_acquisitions = $anchor->safe_psql('postgres', 'SELECT lease_acquisitions FROM snowid_stats');
my ($sysid) = $coord->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');

# ---- the coordinator is lost; the backup is started in its place ----
$coord->stop('immediate');
my $t_down = time;
$restored->start;
my $restore_started = $restored->safe_psql('postgres', 'SELECT now()');
note sprintf('restored coordinator up %.1f s after the old one went down', time - $t_down);

# The hard case: nothing in the WAL position tells this server from the old one.
is($restored->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
	$sysid, 'the restored coordinator has the same system identifier');
is( $restored->safe_psql(
		'postgres',
		q{SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int}),
	'1',
	'and the same timeline (no archive recovery)');
is( $restored->safe_psql(
		'postgres',
		"SELECT count(*) FROM snowid_coordinator.leases WHERE worker_id = $w_cutoff"),
	'0',
	'the restored coordinator knows nothing of cutoff\'s worker id');

$newcomer->start;
$newcomer->safe_psql('postgres', 'CREATE EXTENSION snowid');
create_id_tables($newcomer);
# It tries to generate from the start (refusals are recorded meanwhile).
my $g_new = start_generator($newcomer, 'newcomer', seconds => 120);

# ---- the restored coordinator fences itself ----
ok( poll_until(
		$restored, q{SELECT count(*) = 1 FROM snowid_coordinator.events WHERE event = 'fence'},
		't', 15),
	'the restored coordinator fenced itself (a fence event)');
note 'fence: ' . $restored->safe_psql('postgres',
	"SELECT detail FROM snowid_coordinator.events WHERE event = 'fence'");
# (Without a fence event, the checks below go on from the restore's start.)
my ($fence_at, $fence_floor) = split /\|/, $restored->safe_psql(
	'postgres', qq{
SELECT coalesce(max(e.at), '$restore_started'), max(s.fence_floor_ms)
FROM snowid_coordinator.settings s
LEFT JOIN snowid_coordinator.events e ON e.event = 'fence'});
ok( poll_until(
		$newcomer,
		q{SELECT state = 'no_lease_yet' AND detail LIKE '%fenced%' FROM snowid_status()},
		't', 10),
	'newcomer is refused a lease while the restored coordinator is fenced');

# ---- newcomer gets a lease only after the fence, above the floor ----
ok(wait_for_state($newcomer, 'active', 30), 'newcomer holds a lease in the end');
my $w_new = $newcomer->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
is($w_new, $w_cutoff, "newcomer has cutoff's worker id $w_cutoff (never used, as far as the backup knows)");
is( $restored->safe_psql(
		'postgres', qq{
SELECT min(at) >= '$fence_at'::timestamptz + interval '8 s'
FROM snowid_coordinator.events WHERE event = 'grant' AND at >= '$restore_started'}),
	't',
	'no grant for a lease plus the safety period (8 s) after the fence');
ok(wait_for_ids($newcomer, 'newcomer', 500), 'newcomer generates');

my $new_floor = $newcomer->safe_psql('postgres',
	'SELECT round(extract(epoch FROM floor) * 1000)::bigint FROM snowid_status()');
cmp_ok($new_floor, '>=', $fence_floor,
	"newcomer's floor ($new_floor) is at least the fence floor ($fence_floor)");

# ---- anchor renews at the restored coordinator; cutoff runs out ----
ok(wait_for_state($anchor, 'active', 20), 'anchor is active');
is($anchor->safe_psql('postgres', 'SELECT lease_acquisitions FROM snowid_stats'),
	$anchor_acquisitions, 'anchor kept its lease (renewed, not taken again)');
is( $restored->safe_psql(
		'postgres', qq{
SELECT renewed_at > '$restore_started' FROM snowid_coordinator.leases WHERE worker_id = $w_anchor}),
	't',
	'anchor\'s lease was renewed at the restored coordinator');
ok(wait_for_state($cutoff, 'expired', 10), 'cutoff, unable to renew, let its lease expire');

# ---- no duplicates; newcomer's ids above everything issued before ----
is(stop_generator($_->[0], $_->[1]), 0, $_->[0]->name . ': generator ran to the end')
  for ([ $anchor, $g_anchor ], [ $cutoff, $g_cutoff ], [ $newcomer, $g_new ]);
my $cutoff_top = $cutoff->safe_psql('postgres',
	'SELECT round(extract(epoch FROM snowid_timestamp(max(id))) * 1000)::bigint FROM snowid_gen_ids');
cmp_ok($new_floor, '>=', $cutoff_top,
	"newcomer's floor ($new_floor) is above cutoff's last id ($cutoff_top)");
my $before_top = $anchor->safe_psql('postgres', qq{
SELECT round(extract(epoch FROM snowid_timestamp(max(id))) * 1000)::bigint
FROM snowid_gen_ids WHERE at < '$restore_started'});
cmp_ok($new_floor, '>=', $before_top,
	"newcomer's floor is above anchor's last id before the restore ($before_top)");
is( $newcomer->safe_psql(
		'postgres',
		"SELECT round(extract(epoch FROM snowid_timestamp(min(id))) * 1000)::bigint > $new_floor FROM snowid_gen_ids"),
	't',
	'newcomer\'s ids lie above its floor');

is( $newcomer->safe_psql(
		'postgres', "SELECT count(*) FROM snowid_gen_errors WHERE sqlstate <> '57P03'"),
	'0',
	'newcomer was refused only for want of a lease (57P03)');
my $ids = cluster_ids([ $anchor, $cutoff, $newcomer ]);
is(count_duplicates($ids), 0, scalar(@$ids) . ' ids, none issued twice');
my $runs = worker_runs($ids);
is(join(' ', map { $_->[0] } @{ $runs->{$w_cutoff} }), 'cutoff newcomer',
	"worker id $w_cutoff: all of cutoff's ids, then all of newcomer's");

# ---- the same backup, with archive recovery: a new timeline, fenced too ----
$_->stop for ($anchor, $cutoff, $newcomer);
$restored->stop;
$pitr->init_from_backup($coord, 'before_grants', has_restoring => 1, standby => 0);
$pitr->start;
ok( poll_until(
		$pitr, 'SELECT NOT pg_is_in_recovery()', 't', 30),
	'archive recovery ended');
my $tli = $pitr->safe_psql('postgres',
	q{SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int});
cmp_ok($tli, '>', 1, "archive recovery ended on a new timeline ($tli)");
is(probe_grant($pitr), 'fenced', 'a grant asked of it is refused: fenced');
like( $pitr->safe_psql(
		'postgres',
		q{SELECT detail FROM snowid_coordinator.events WHERE event = 'fence'}),
	qr/timeline $tli$/,
	'its fence event names the new timeline');
$pitr->stop;
note sprintf('047_restore took %.1f s', time - $t_start);
done_testing();
