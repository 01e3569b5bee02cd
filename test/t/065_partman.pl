# Time partitioning with pg_partman (Debian's postgresql-15-partman, 4.7),
# as the README recipe does it: a table keyed by a bigint of snowids,
# partitioned by id ranges of one UTC day each, made and maintained by
# create_parent() and run_maintenance().  Partitions are created ahead,
# rows land in the partition of their time, run_maintenance() keeps the
# partitions ahead as ids move on and drops old ones, and
# "WHERE id >= snowid_from_time(...)::bigint" prunes partitions (read in
# EXPLAIN, at plan time and at run time).  A snowid-typed key prunes
# without the cast.
#
# Skips, saying why, on a PostgreSQL major without the partman package.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $node = snowid_node('partman');
my $sharedir = $node->config_data('--sharedir');
my ($major) = $node->config_data('--version') =~ /(\d+)/;
if (!-f "$sharedir/extension/pg_partman.control")
{
	plan skip_all => "pg_partman is not installed for PostgreSQL $major "
	  . "(Debian package postgresql-$major-partman; scripts/common.sh installs it for 15)";
}

$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'the node holds a lease');

sub sql
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', "SET TimeZone = 'UTC'; $sql");
}

# ---- the recipe ---------------------------------------------------------

sql(q{
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;

CREATE TABLE public.events (
	id		bigint NOT NULL DEFAULT snowid_nextval(),
	payload	text,
	PRIMARY KEY (id)
) PARTITION BY RANGE (id);

SELECT partman.create_parent(
	p_parent_table => 'public.events',
	p_control => 'id',
	p_type => 'native',
	p_interval => (snowid_from_time('2025-01-02 00:00+00')::bigint
				   - snowid_from_time('2025-01-01 00:00+00')::bigint)::text,
	p_premake => 4,
	p_start_partition => snowid_from_time(date_trunc('day', now(), 'UTC'))::bigint::text);
});
note('pg_partman ' . sql(q{SELECT extversion FROM pg_extension WHERE extname = 'pg_partman'}));

my $day = sql(q{SELECT snowid_from_time('2025-01-02 00:00+00')::bigint - snowid_from_time('2025-01-01 00:00+00')::bigint});
is($day, 86_400_000 << 22, "one day of ids is 86,400,000 ms << 22 bits ($day)");

# The partitions, in order: "start..end" as the UTC days of their bounds
# (show_partition_info() gives the first and the last id of each).
sub partitions
{
	return sql(q{
SELECT string_agg(snowid_timestamp(i.child_start_id::snowid)::date || '..' ||
				  snowid_timestamp((i.child_end_id + 1)::snowid)::date, ' '
				  ORDER BY i.child_start_id)
  FROM partman.show_partitions('public.events') p,
	   LATERAL partman.show_partition_info(p.partition_schemaname || '.' || p.partition_tablename) i});
}
my $expect_days = sub {
	my ($from, $to) = @_;
	return sql(qq{
SELECT string_agg(d::date || '..' || (d + interval '1 day')::date, ' ' ORDER BY d)
  FROM generate_series(date_trunc('day', now(), 'UTC') + interval '$from days',
					   date_trunc('day', now(), 'UTC') + interval '$to days', interval '1 day') d});
};
is(partitions(), $expect_days->(0, 4),
	'create_parent made today\'s partition and 4 days ahead, each one UTC day of ids');
is(sql(q{SELECT count(*) FROM pg_inherits WHERE inhparent = 'public.events'::regclass}), 6,
	'5 day partitions and a default partition');

# ---- rows land in the partition of their time -------------------------

sql(q{
INSERT INTO events (payload) SELECT 'now ' || g FROM generate_series(1, 10) g;
INSERT INTO events (id, payload) VALUES
	(snowid_from_parts(date_trunc('day', now(), 'UTC') + interval '1 day 12 hours', 0, 0), 'day +1 noon'),
	(snowid_from_parts(date_trunc('day', now(), 'UTC') + interval '3 days 23:59:59.999', 0, 0), 'day +3 last ms'),
	(snowid_from_parts(date_trunc('day', now(), 'UTC') + interval '2 days', 0, 0), 'day +2 first ms');
});
is(sql(q{
WITH parts AS MATERIALIZED (
	SELECT (p.partition_schemaname || '.' || p.partition_tablename)::regclass AS part,
		   i.child_start_id AS lo, i.child_end_id AS hi
	  FROM partman.show_partitions('public.events') p,
		   LATERAL partman.show_partition_info(p.partition_schemaname || '.' || p.partition_tablename) i)
SELECT count(*) FILTER (WHERE snowid_timestamp(e.id::snowid)::date = snowid_timestamp(parts.lo::snowid)::date
						  AND e.id BETWEEN parts.lo AND parts.hi),
	   count(*)
  FROM events e LEFT JOIN parts ON parts.part = e.tableoid}),
	'13|13', 'every row is in the partition whose id range (and UTC day) holds its time');
is(sql(q{SELECT string_agg(DISTINCT e.tableoid::regclass::text || ':' || snowid_timestamp(e.id::snowid)::date, ' ')
		 FROM events e WHERE payload LIKE 'day %'}),
	sql(q{
SELECT string_agg(format('events_p%s:%s', snowid_from_time(d)::bigint, d::date), ' ')
  FROM unnest(ARRAY[date_trunc('day', now(), 'UTC') + interval '1 day',
					date_trunc('day', now(), 'UTC') + interval '2 days',
					date_trunc('day', now(), 'UTC') + interval '3 days']) d}),
	'the rows of days +1, +2 and +3 are in events_p<first id of that day>');
is(sql(q{SELECT count(*) FROM ONLY events_default}), 0, 'nothing went to the default partition');

# ---- run_maintenance() keeps partitions ahead ---------------------------

sql(q{INSERT INTO events (id, payload) VALUES
	(snowid_from_parts(date_trunc('day', now(), 'UTC') + interval '4 days 6 hours', 0, 0), 'day +4')});
is(partitions(), $expect_days->(0, 4), 'an id in the last partition made ahead: no new partition yet');
sql(q{SELECT partman.run_maintenance('public.events')});
is(partitions(), $expect_days->(0, 8),
	'run_maintenance() made 4 more days ahead of the newest id');

# ---- pruning: WHERE id >= snowid_from_time(...) --------------------------

# The partitions a plan scans, their names sorted.
sub scanned
{
	my ($plan) = @_;
	my %seen;
	$seen{$1} = 1 while $plan =~ /\bon (events_\w+) /g;	# tables, not their indexes
	return join ' ', sort keys %seen;
}
my $day2 = sql(q{SELECT date_trunc('day', now(), 'UTC') + interval '2 days'});
my $plan = sql(qq{EXPLAIN (COSTS OFF) SELECT * FROM events WHERE id >= snowid_from_time('$day2')::bigint});
note("plan-time pruning:\n$plan");
my $want = sql(qq{
SELECT string_agg(n, ' ' ORDER BY n) FROM (
	SELECT format('events_p%s', snowid_from_time(d)::bigint) AS n
	  FROM generate_series(timestamptz '$day2', timestamptz '$day2' + interval '6 days', interval '1 day') d
	UNION ALL SELECT 'events_default') s});
is(scanned($plan), $want,
	'a constant time: the plan scans only the partitions from that day on (and the default)');
unlike($plan, qr/events_p@{[ sql(q{SELECT snowid_from_time(date_trunc('day', now(), 'UTC'))::bigint}) ]}\b/,
	'today\'s partition is pruned');

# now() is stable, not immutable: pruned when the executor starts.
$plan = sql(q{EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT * FROM events WHERE id >= snowid_from_time(now() + interval '2 days')::bigint});
note("run-time pruning:\n$plan");
like($plan, qr/Subplans Removed: 2\b/,
	'relative to now(): the 2 partitions before the day after tomorrow are removed at executor start');
is(sql(q{SELECT count(*) FROM events WHERE id >= snowid_from_time(date_trunc('day', now(), 'UTC') + interval '2 days')::bigint}),
	3, 'and the query finds the 3 rows from day +2 on');

# Without the cast the comparison is snowid's bigint >= snowid operator,
# which is not in bigint's operator family: no pruning.  The README says
# to cast; this keeps it true.
$plan = sql(qq{EXPLAIN (COSTS OFF) SELECT * FROM events WHERE id >= snowid_from_time('$day2')});
is(scalar(() = $plan =~ /\bon events_p\d+ /g), 9,
	'on a bigint key, without ::bigint all 9 day partitions are scanned');

# A snowid-typed key (native partitioning, without partman) prunes
# without the cast: its operator class holds the comparison.
$plan = sql(qq{
CREATE TABLE s_events (id snowid NOT NULL DEFAULT snowid_nextval()) PARTITION BY RANGE (id);
CREATE TABLE s_events_d0 PARTITION OF s_events
	FOR VALUES FROM (snowid_from_time(date_trunc('day', now(), 'UTC'))) TO (snowid_from_time('$day2'));
CREATE TABLE s_events_d2 PARTITION OF s_events
	FOR VALUES FROM (snowid_from_time('$day2')) TO (snowid_from_time(timestamptz '$day2' + interval '1 day'));
EXPLAIN (COSTS OFF) SELECT * FROM s_events WHERE id >= snowid_from_time('$day2');});
note("snowid key:\n$plan");
is(scanned($plan), '', 'no events_ partition in the snowid-keyed plan');
like($plan, qr/s_events_d2/, 'a snowid key: the later partition is scanned');
unlike($plan, qr/s_events_d0/, 'and the earlier one pruned, without a cast');

# ---- retention: old days dropped by run_maintenance() --------------------

sql(qq{UPDATE partman.part_config SET retention = ($day * 2)::text, retention_keep_table = false
	  WHERE parent_table = 'public.events'});
sql(q{SELECT partman.run_maintenance('public.events')});
is(partitions(), $expect_days->(2, 8),
	'retention of 2 days of ids: partitions ending 2 days before the newest id are dropped');
is(sql(q{SELECT count(*) FROM events}), 3, 'the rows of days +2, +3 and +4 are still there');

$node->stop;
done_testing();
