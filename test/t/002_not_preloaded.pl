# Without shared_preload_libraries the type and decoding work, and
# everything that needs shared memory fails with an error naming the line
# to add to postgresql.conf.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
is( $node->safe_psql('postgres',
		"SELECT snowid_worker(snowid_from_parts('2025-06-01', 7, 1))"),
	'7', 'decoding works without preloading');

foreach my $call ('SELECT snowid_nextval()',
	'SELECT * FROM snowid_generate(3)',
	'SELECT * FROM snowid_status()',
	'SELECT * FROM snowid_stats')
{
	my ($rc, $out, $err) = $node->psql('postgres', $call,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	isnt($rc, 0, "$call fails");
	like($err, qr/55000/, "$call: SQLSTATE 55000");
	like($err, qr/snowid must be loaded via "shared_preload_libraries"/,
		"$call: says what is wrong");
	like($err, qr/shared_preload_libraries = 'snowid'/,
		"$call: hint names the postgresql.conf line");
}

# No keeper ran, so nothing was installed behind the user's back.
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'snowid_coordinator'"),
	'0', 'no coordinator installed without the keeper');

$node->stop;
done_testing();
