# No secret in a setting: members of pg_read_all_settings (pg_monitor) read
# even superuser-only settings, so a password in snowid.coordinator is
# refused at start-up with a hint naming the alternatives.  The passfile
# route then gets a lease from a coordinator that demands a password.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $coord = snowid_coordinator_node('coord_pw');
$coord->safe_psql('postgres', q{ALTER ROLE snowid_node PASSWORD 'n0d3-s3cret'});
# every TCP login of the node role needs its password
$coord->append_conf('pg_hba.conf', '');
{
	my $hba = $coord->data_dir . '/pg_hba.conf';
	open my $in, '<', $hba or die;
	my @lines = <$in>;
	close $in;
	open my $out, '>', $hba or die;
	print $out "host all snowid_node 127.0.0.1/32 scram-sha-256\n";
	print $out "local all snowid_node scram-sha-256\n";
	print $out @lines;
	close $out;
}
$coord->reload;

my $base = coordinator_conninfo($coord);

# A password in the conninfo: the server does not start.
my $bad = snowid_remote_node('node_pw', $coord,
	conninfo => "$base password=n0d3-s3cret");
my $started = $bad->start(fail_ok => 1);
ok(!$started, 'a node whose snowid.coordinator holds a password does not start');
my $log = slurp_file($bad->logfile);
like($log, qr/"snowid\.coordinator" must not contain a password/,
	'the log says why');
like($log, qr/HINT:.*passfile=.*\.pgpass.*client certificate/,
	'the hint names the passfile, .pgpass and a client certificate');
unlike($log, qr/n0d3-s3cret/, 'the password itself never reaches the log');

# sslpassword (the passphrase of a client key) is a secret too.
my $bad2 = snowid_remote_node('node_sslpw', $coord,
	conninfo => "$base sslpassword=k3y-phrase");
ok(!$bad2->start(fail_ok => 1), 'sslpassword is refused as well');
like(slurp_file($bad2->logfile), qr/It sets "sslpassword"/, 'and named');

# Without the password, and without a passfile, no login: the node does
# not generate (the coordinator refuses the connection).
my $nopass = snowid_remote_node('node_nopass', $coord);
$nopass->start;
$nopass->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(poll_until($nopass,
	q{SELECT state = 'coordinator_error' AND detail LIKE '%password%' FROM snowid_status()},
	't', 60), 'without a password the node cannot log in: coordinator_error');
$nopass->stop;

# A passfile readable by the server's OS user only.
my $passfile = $coord->basedir . '/node.pgpass';
open my $pf, '>', $passfile or die;
print $pf join(':', $coord->host, $coord->port, '*', 'snowid_node', 'n0d3-s3cret') . "\n";
close $pf;
chmod 0600, $passfile;
my $good = snowid_remote_node('node_passfile', $coord,
	conninfo => "$base passfile=$passfile");
$good->start;
$good->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($good, 'active'), 'with passfile=... the node gets a lease');
ok($good->safe_psql('postgres', 'SELECT snowid_nextval() > 0'), 'and generates');

# What a pg_monitor member sees.
$good->safe_psql('postgres', 'CREATE ROLE watcher LOGIN IN ROLE pg_monitor');
my $seen = $good->safe_psql('postgres',
	q{SELECT current_setting('snowid.coordinator') || ' ' || coordinator FROM snowid_status()},
	extra_params => [ '-U', 'watcher' ]);
unlike($seen, qr/n0d3-s3cret/, 'a pg_monitor member sees no password');
like($seen, qr/passfile=/, 'it sees where the password is kept');

$good->stop;
$coord->stop;
done_testing();
