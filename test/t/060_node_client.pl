# A real client: examples/node/example.js (node-postgres) against a snowid
# node.  It inserts with DEFAULT snowid_nextval(), reads the ids back as
# text and as JSON and exits non-zero if any digit is lost.  Its
# dependencies come from examples/node/package-lock.json: scripts/test.sh
# runs "npm ci" before the suites; if they are still missing here, this
# test runs it itself.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $example_dir = abs_path(dirname(__FILE__) . '/../../examples/node');
ok(-f "$example_dir/example.js", "example at $example_dir");

my ($node_out, $node_err);
if (!ok(eval { IPC::Run::run([ 'node', '--version' ], '>', \$node_out, '2>', \$node_err) },
		'node is installed'))
{
	diag('node (Node.js 18 or later, with npm) is needed for the client example');
	done_testing();
	exit;
}
note("node $node_out");

# Dependencies: installed by scripts/test.sh; from the lock file here if not.
if (!-f "$example_dir/node_modules/pg/package.json")
{
	note('examples/node/node_modules missing: running npm ci');
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[ 'npm', 'ci', '--no-audit', '--no-fund', '--prefer-offline' ],
		'>', \$out, '2>', \$err, init => sub { chdir $example_dir or die $! });
	note("npm ci: $out$err");
}
ok(-f "$example_dir/node_modules/pg/package.json",
	'node-postgres is installed from the lock file');

my $node = snowid_node('node_client');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'the node holds a lease');

# The example connects with the libpq environment variables, as an
# application would (PGHOST is the Unix socket directory here).
my %env = (
	PGHOST => $node->host,
	PGPORT => $node->port,
	PGDATABASE => 'postgres',
	PGUSER => scalar(getpwuid($>)),
	SNOWID_EXAMPLE_TABLE => 'orders_from_node');

sub run_example
{
	my (%extra) = @_;
	my ($out, $err) = ('', '');
	my %all = (%env, %extra);
	local @ENV{ keys %all } = values %all;
	IPC::Run::run([ 'node', 'example.js' ], '>', \$out, '2>', \$err,
		init => sub { chdir $example_dir or die $! },
		IPC::Run::timeout(120));
	return ($? >> 8, $out, $err);
}

my ($rc, $out, $err) = run_example(SNOWID_EXAMPLE_KEEP => '1');
note("example output:\n$out");
note("example stderr:\n$err") if $err ne '';
is($rc, 0, 'node example.js exits 0');
like($out, qr/^inserted 20 rows$/m, 'it inserted 20 rows');
like($out, qr/^text: 20 of 20 ids keep every digit$/m, 'text keeps every digit');
like($out, qr/^json: 20 of 20 ids keep every digit$/m, 'JSON keeps every digit');
like($out,
	qr/^bigint as a JSON number: [1-9]\d* of 20 ids lose digits in JSON\.parse \(e\.g\. \d+ -> \d+\)$/m,
	'a bigint as a bare JSON number loses digits');
like($out, qr/^lookup by string id: 20 of 20 found$/m, 'ids passed back as strings find their rows');
unlike($out, qr/MISMATCH/, 'no mismatch reported');
like($out, qr/^all ids kept every digit$/m, 'final line');

# The rows it left behind are the ones it saw: the table is real.
is($node->safe_psql('postgres',
		'SELECT count(*), count(DISTINCT id), bool_and(id > 9007199254740991) FROM orders_from_node'),
	'20|20|t', 'the server holds 20 distinct ids, all above 2^53 - 1');

# It can fail: with generation refused (no extension in a new database
# and no right to create it) it must not exit 0.
$node->safe_psql('postgres', 'CREATE DATABASE noext; CREATE ROLE plain LOGIN');
($rc, $out, $err) = run_example(PGDATABASE => 'noext', PGUSER => 'plain');
is($rc, 2, 'without the right to create the extension it exits 2');
like($err, qr/^error: .*permission denied/m, 'and says why');

$node->stop;
done_testing();
