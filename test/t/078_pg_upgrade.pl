# pg_upgrade (15 -> 15 here; across majors in the PostgreSQL-majors suite).
#  - A local-mode node: the upgraded server has a new system identifier,
#    so it refuses with unfenced_copy until snowid_confirm_takeover(); then
#    its ids lie above every id of the old server, and its snowid column
#    and index came along.
#  - A remote coordinator: upgraded, it keeps its leases and fences itself
#    (new identity); a node holding a lease renews it.
use strict;
use warnings;

use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $bindir = $ENV{PG_CONFIG} ? `$ENV{PG_CONFIG} --bindir` : '';
chomp $bindir;
$bindir ||= (grep { -x "$_/pg_upgrade" } split /:/, $ENV{PATH})[0];
plan skip_all => 'pg_upgrade not found' unless $bindir && -x "$bindir/pg_upgrade";

# pg_upgrade writes its logs into the current directory.
my $workdir = PostgreSQL::Test::Utils::tempdir();

sub upgrade
{
	my ($old, $new) = @_;
	$old->stop;
	my $rc = PostgreSQL::Test::Utils::run_command(
		[ 'sh', '-c', "cd $workdir && $bindir/pg_upgrade -b $bindir -B $bindir "
			. '-d ' . $old->data_dir . ' -D ' . $new->data_dir
			. ' -p ' . $old->port . ' -P ' . $new->port . ' -s ' . $old->host ]);
	return $rc;
}

# ---- a local-mode node ----
my $old = snowid_node('up_old');
$old->start;
$old->safe_psql('postgres', q{
CREATE EXTENSION snowid;
CREATE TABLE orders (id snowid PRIMARY KEY DEFAULT snowid_nextval(), note text);
});
ok(wait_for_state($old, 'active'), 'old node active');
$old->safe_psql('postgres', q{INSERT INTO orders (note) SELECT 'before' FROM generate_series(1, 1000)});
my $old_max = $old->safe_psql('postgres', 'SELECT max(id) FROM orders');

my $new = snowid_node('up_new');
upgrade($old, $new);
$new->start;
is($new->safe_psql('postgres', 'SELECT count(*) FROM orders'), '1000', 'the rows came along');
like($new->safe_psql('postgres', q{EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id = 5}),
	qr/Index/, 'and the snowid primary key index');
ok(wait_for_state($new, 'unfenced_copy', 30),
	'the upgraded node refuses: unfenced_copy (new system identifier)');
my ($state) = psql_error($new, 'postgres', 'SELECT snowid_nextval()');
is($state, '55000', 'generation is refused');
$new->safe_psql('postgres', 'SELECT snowid_confirm_takeover()');
ok(wait_for_state($new, 'active', 30), 'after snowid_confirm_takeover() it generates');
$new->safe_psql('postgres', q{INSERT INTO orders (note) SELECT 'after' FROM generate_series(1, 1000)});
is($new->safe_psql('postgres', "SELECT min(id) > $old_max FROM orders WHERE note = 'after'"), 't',
	'every new id lies above every id of the old server');
$new->stop;

# ---- a remote coordinator ----
my $coord = snowid_coordinator_node('upc_old');
my $node = snowid_remote_node('upc_node', $coord);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'node active at the old coordinator');
my $w = $node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()');
# The node keeps pointing at the old address: the new server takes its
# port (pg_upgrade runs the new one on another port meanwhile).
my $coord_new = PostgreSQL::Test::Cluster->new('upc_new', port => $coord->port);
$coord_new->init;
{
	my $tmp = PostgreSQL::Test::Cluster->new('upc_tmp');
	my $save = $coord_new->{_port};
	$coord_new->{_port} = $tmp->port;
	upgrade($coord, $coord_new);
	$coord_new->{_port} = $save;
}
$coord_new->start;
is($coord_new->safe_psql('postgres', "SELECT count(*) FROM snowid_coordinator.leases WHERE worker_id = $w AND owner IS NOT NULL"),
	'1', 'the upgraded coordinator kept the lease');
ok(poll_until($coord_new,
	q{SELECT count(*) > 0 FROM snowid_coordinator.events WHERE event = 'fence' AND detail LIKE '%identity changed%'}, 't', 30),
	'and fenced itself: a new system identifier');
ok(wait_for_state($node, 'active', 30), 'the node renews its lease at the upgraded coordinator');
is($node->safe_psql('postgres', 'SELECT worker_id FROM snowid_status()'), $w, 'the same worker id');
$node->stop;
$coord_new->stop;
done_testing();
