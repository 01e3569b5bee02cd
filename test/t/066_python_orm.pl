# Python clients, for real: examples/python against a snowid node, with
# Debian's python3-django (3.2) and python3-sqlalchemy (1.4) over
# psycopg2, and plain python3-psycopg (3).  Each example takes its ids
# from the database default snowid_nextval() (Django: save() and
# bulk_create(); SQLAlchemy: server_default=text('snowid_nextval()')),
# reads them back and carries them through JSON as strings, and exits
# non-zero if any digit is lost.  As test/t/060_node_client.pl does for
# node-postgres.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;
use SnowidTest::Ecosystem;

my $dir = abs_path(dirname(__FILE__) . '/../../examples/python');
my $python = debian_python();

my ($out, $err) = ('', '');
IPC::Run::run([ $python, '-c',
		'import django, sqlalchemy, psycopg, psycopg2; '
		  . 'print(django.get_version(), sqlalchemy.__version__, psycopg.__version__, psycopg2.__version__.split()[0])' ],
	'>', \$out, '2>', \$err);
if (!ok($? == 0, "$python has Django, SQLAlchemy, psycopg and psycopg2"))
{
	diag("$err\ninstall python3-django python3-sqlalchemy python3-psycopg python3-psycopg2 "
		  . '(scripts/common.sh does)');
	done_testing();
	exit;
}
chomp $out;
my ($django, $sqlalchemy) = split ' ', $out;
note("Django, SQLAlchemy, psycopg, psycopg2: $out");
like($django, qr/^3\.2\./, "Django $django is Debian 12's 3.2 (no db_default: the example's way is needed)");
like($sqlalchemy, qr/^1\.4\./, "SQLAlchemy $sqlalchemy is 1.4");

my $node = snowid_node('python_orm');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'the node holds a lease');

my %env = (
	PGHOST => $node->host,
	PGPORT => $node->port,
	PGDATABASE => 'postgres',
	PGUSER => scalar(getpwuid($>)),
	PYTHONDONTWRITEBYTECODE => '1');

sub run_example
{
	my ($script, %extra) = @_;
	my ($o, $e) = ('', '');
	my %all = (%env, %extra);
	local @ENV{ keys %all } = values %all;
	IPC::Run::run([ $python, $script ], '>', \$o, '2>', \$e,
		init => sub { chdir $dir or die $! },
		IPC::Run::timeout(180));
	return ($? >> 8, $o, $e);
}

my %table = (
	django_example => 'snowid_django_order',
	sqlalchemy_example => 'snowid_sqlalchemy_order',
	psycopg_example => 'snowid_psycopg_order');

foreach my $example (qw(django_example sqlalchemy_example psycopg_example))
{
	my ($rc, $o, $e) = run_example("$example.py", SNOWID_EXAMPLE_KEEP => '1');
	note("$example output:\n$o");
	note("$example stderr:\n$e") if $e ne '';
	is($rc, 0, "$example.py exits 0");
	like($o, qr/^inserted 20 rows$/m, "$example: inserted 20 rows");
	like($o, qr/^text: 20 of 20 ids keep every digit$/m, "$example: text keeps every digit");
	like($o, qr/^json: 20 of 20 ids keep every digit$/m, "$example: JSON (ids as strings) keeps every digit");
	like($o,
		qr/^bigint as a JSON number: [1-9]\d* of 20 ids lose digits in a JavaScript-style parse \(e\.g\. \d+ -> \d+\)$/m,
		"$example: a bare JSON number loses digits");
	like($o, qr/^lookup by string id: 20 of 20 found$/m, "$example: ids passed back as strings find their rows");
	unlike($o, qr/MISMATCH/, "$example: no mismatch reported");
	like($o, qr/^all ids kept every digit$/m, "$example: final line");
	if ($example ne 'psycopg_example')
	{
		like($o, qr/^ok: the column default is snowid_nextval\(\)$/m,
			"$example: the key's column default is snowid_nextval()");
	}

	# The rows it left behind are the ones it saw: the table is real.
	is($node->safe_psql('postgres',
			"SELECT count(*), count(DISTINCT id), bool_and(id::bigint > 9007199254740991), "
			  . "bool_and(snowid_worker(id::snowid) = (SELECT worker_id FROM snowid_status())) "
			  . "FROM $table{$example}"),
		'20|20|t|t', "$example: the server holds 20 distinct snowids of this node, all above 2^53 - 1");
}
is($node->safe_psql('postgres', q{SELECT format_type(atttypid, atttypmod) FROM pg_attribute
	WHERE attrelid = 'snowid_django_order'::regclass AND attname = 'id'}),
	'bigint', 'Django: the key column is a bigint (no sequence: bigserial avoided)');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
	WHERE c.relkind = 'S' AND d.refobjid = 'snowid_django_order'::regclass}),
	0, 'Django: no sequence was created for the key');
is($node->safe_psql('postgres', q{SELECT format_type(atttypid, atttypmod) FROM pg_attribute
	WHERE attrelid = 'snowid_sqlalchemy_order'::regclass AND attname = 'id'}),
	'snowid', 'SQLAlchemy: the key column is of type snowid');

# Without the extension and without the right to create it, they must
# not exit 0.
$node->safe_psql('postgres', 'CREATE DATABASE noext; CREATE ROLE plain LOGIN');
foreach my $example (qw(django_example sqlalchemy_example psycopg_example))
{
	my ($rc, $o, $e) = run_example("$example.py", PGDATABASE => 'noext', PGUSER => 'plain');
	is($rc, 2, "$example: without the right to create the extension it exits 2");
	like($e, qr/^error: .*permission denied/m, "$example: and says why") or diag($e);
}

$node->stop;
done_testing();
