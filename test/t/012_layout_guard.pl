# The layout is pinned by the coordinator: a node whose settings changed
# is refused with both layouts named, and nothing is issued.  A layout
# whose timestamp bits are used up refuses to generate.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $node = snowid_node('layout');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'node active with the default layout');
my $id = $node->safe_psql('postgres', 'SELECT snowid_nextval()');

# Change the layout and restart: the coordinator recorded the old one.
$node->append_conf('postgresql.conf', "snowid.sequence_bits = 11\n");
$node->restart;
ok(wait_for_state($node, 'layout_mismatch'), 'state layout_mismatch');
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT snowid_nextval()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($rc, 0, 'generation refused');
like($err, qr/55000/, 'SQLSTATE 55000');
like($err, qr/layout of this node differs from the coordinator's/, 'says what is wrong');
like($err, qr/coordinator's layout is timestamp_bits=41 worker_bits=10 region_bits=0 sequence_bits=12/,
	'names the coordinator\'s layout');
like($err, qr/the node's is timestamp_bits=42 worker_bits=10 region_bits=0 sequence_bits=11/,
	'names the node\'s layout');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM snowid_coordinator.events WHERE event = 'refused'") > 0 ? 1 : 0,
	1, 'the refusal is in the audit trail');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM snowid_coordinator.worker_leases WHERE state = 'held'"),
	'0', 'no worker id is held');

# Back to the recorded layout: generation resumes above the old ids.
$node->adjust_conf('postgresql.conf', 'snowid.sequence_bits', '12');
$node->restart;
ok(wait_for_state($node, 'active'), 'active again with the recorded layout');
ok($node->safe_psql('postgres', "SELECT snowid_nextval() > $id") eq 't',
	'new ids above the old ones');
$node->stop;

# A layout whose time has run out: 38 timestamp bits from 1970 end in 1978.
my $old = snowid_node('exhausted', conf => qq{
snowid.epoch = '1970-01-01 00:00:00+00'
snowid.worker_bits = 12
snowid.sequence_bits = 13
});
$old->start;
$old->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($old, 'time_exhausted'), 'state time_exhausted: no lease taken');
($rc, $out, $err) = $old->psql('postgres', 'SELECT snowid_nextval()',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
isnt($rc, 0, 'generation refused when the timestamp bits are used up');
like($err, qr/22003.*timestamp bits are exhausted/s, '22003: timestamp bits are exhausted');
is($old->safe_psql('postgres', 'SELECT time_exhausted_at < now() FROM snowid_status()'),
	't', 'snowid_status() shows when time ran out');
like(slurp_file($old->logfile), qr/WARNING:  snowid timestamp bits run out at 1978/,
	'the keeper warned in the log');
$old->stop;

done_testing();
