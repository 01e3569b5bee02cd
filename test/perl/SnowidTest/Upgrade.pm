# Helpers for testing pg_upgrade from an older PostgreSQL major to the one
# under test: servers of the old major with snowid preloaded, and the
# upgrade itself.  Used by test/t/091_pg_upgrade_major.pl.
package SnowidTest::Upgrade;

use strict;
use warnings;

use Cwd;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SnowidTest;

use Exporter 'import';
our @EXPORT = qw(old_install_path old_install_problem old_cluster
  upgraded_cluster run_pg_upgrade snowid_node_conf strip_pg_attver
  old_coordinator);

# Where the old major lives: SNOWID_UPGRADE_FROM (an installation prefix
# with bin/), default Debian's PostgreSQL 15.
sub old_install_path
{
	return $ENV{SNOWID_UPGRADE_FROM} // '/usr/lib/postgresql/15';
}

# Why the upgrade cannot be tested here, or undef: the old major must be
# installed, older than the one under test, and hold this tree's snowid
# (make test installs it into each major it tests, 15 first).
sub old_install_problem
{
	my ($new_version) = @_;
	my $old = old_install_path();
	my $pg_config = "$old/bin/pg_config";
	return "no PostgreSQL installation in $old (set SNOWID_UPGRADE_FROM)"
	  unless -x "$old/bin/pg_upgrade" || -x "$old/bin/postgres";
	return "$pg_config is missing (Debian package postgresql-server-dev-NN)"
	  unless -x $pg_config;
	my ($old_major) = `$pg_config --version` =~ /PostgreSQL (\d+)/;
	my ($new_major) = "$new_version" =~ /^(\d+)/;
	return "the server under test ($new_version) is not newer than $old ($old_major)"
	  unless $old_major && $new_major > $old_major;
	my $share = `$pg_config --sharedir`;
	chomp $share;
	for my $file ('snowid--1.1.sql', 'snowid_coordinator--1.1.sql')
	{
		my $installed = "$share/extension/$file";
		return "snowid is not installed into PostgreSQL $old_major ($installed is missing): "
		  . "run make test with PG_MAJORS=\"$old_major $new_major\""
		  unless -f $installed;
		return "PostgreSQL $old_major holds another build of snowid ($installed differs "
		  . "from this tree's): run make test with PG_MAJORS=\"$old_major $new_major\""
		  unless slurp_file($installed) eq slurp_file($file);
	}
	return undef;
}

# postgresql.conf lines of a snowid node (as SnowidTest::snowid_node).
sub snowid_node_conf
{
	my ($name, $extra) = @_;
	return qq{
shared_preload_libraries = 'snowid'
snowid.lease_time = '6s'
snowid.safety_period = '2s'
snowid.lease_margin = '1s'
snowid.node_name = '$name'
} . ($extra // '');
}

# A new, initialised (not started) server of the old major; $conf is
# appended to its postgresql.conf.
sub old_cluster
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name,
		install_path => old_install_path());
	# initdb of the old major, never a template of the new one
	$node->init(force_initdb => 1);
	$node->append_conf('postgresql.conf', $conf) if $conf;
	return $node;
}

# A started coordinator of the old major, set up as
# SnowidTest::snowid_coordinator_node sets up one (lease 6 s, safety 2 s,
# margin 1 s, single server; a role "snowid_node" that may call the lease
# functions, whichever protocol versions there are), its initial fence
# waited out.
sub old_coordinator
{
	my ($name) = @_;
	my $node = old_cluster($name);
	$node->start;
	$node->safe_psql('postgres', q{
CREATE EXTENSION snowid_coordinator;
SELECT snowid_coordinator.initialize(lease_time => '6s', safety_period => '2s',
	lease_margin => '1s', single_server => true);
CREATE ROLE snowid_node LOGIN;
GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_node;
DO $$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
		WHERE p.pronamespace = 'snowid_coordinator'::regnamespace
		  AND p.proname ~ '^lease_(acquire|renew|release)_v[0-9]+$'
	LOOP
		EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO snowid_node', f);
	END LOOP;
END
$$;
});
	wait_until_unfenced($node)
	  or die "coordinator $name is still fenced";
	return $node;
}

# A new, initialised (not started) server of the major under test, ready
# to receive $old by pg_upgrade: the same settings, and no data checksums
# when the old server has none (18's initdb turns them on by default).
sub upgraded_cluster
{
	my ($name, $old, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	my @extra;
	push @extra, '--no-data-checksums' if $node->pg_version >= 18;
	$node->init(force_initdb => 1, extra => \@extra);
	$node->append_conf('postgresql.conf', $conf) if $conf;
	return $node;
}

# Debian's PostgreSQL 15.20 (bookworm-security, November 2026) stores an
# attribute option "pg_attver=N" on every column it creates or alters, and
# pg_dump dumps attribute options as they are; PostgreSQL 18.6 (Debian
# sid) does not know the option, so pg_upgrade from 15.20 to 18.6 fails on
# the first table of any database ("unrecognized parameter pg_attver"),
# snowid or not.  On the running old server $node: remove the option from
# the columns of user relations in every database (a direct catalog
# update: RESET does not remove it), so that the upgrade can go ahead.
# Returns the number of columns changed; 0 where the old major does not
# set the option.
sub strip_pg_attver
{
	my ($node) = @_;
	my $changed = 0;
	my @dbs = split /\n/, $node->safe_psql('postgres',
		'SELECT datname FROM pg_database WHERE datallowconn ORDER BY datname');
	for my $db (@dbs)
	{
		$changed += $node->safe_psql($db, q{
WITH s AS (
	UPDATE pg_catalog.pg_attribute
	SET attoptions = (SELECT pg_catalog.array_agg(o) FROM pg_catalog.unnest(attoptions) o
					  WHERE o NOT LIKE 'pg\_attver=%')
	WHERE attrelid >= 16384
	  AND pg_catalog.array_to_string(attoptions, ',') LIKE '%pg\_attver=%'
	RETURNING 1)
SELECT count(*) FROM s});
	}
	return $changed;
}

# pg_upgrade $old (stopped) into $new (stopped), as README.md's
# pg_upgrade section says to: nothing snowid-specific (snowid registers no
# lease keeper in binary-upgrade mode, so both servers may keep snowid in
# shared_preload_libraries).  Returns pg_upgrade's success.
sub run_pg_upgrade
{
	my ($old, $new, $mode) = @_;
	my $old_bindir = $old->config_data('--bindir');
	my $new_bindir = $new->config_data('--bindir');
	my $workdir = $new->basedir . '/upgrade';
	mkdir $workdir;
	my $cwd = Cwd::getcwd();
	chdir $workdir or die "chdir $workdir: $!";
	my $ok = run_log(
		[
			"$new_bindir/pg_upgrade", '--no-sync',
			'-d', $old->data_dir, '-D', $new->data_dir,
			'-b', $old_bindir, '-B', $new_bindir,
			'-s', $new->host,
			'-p', $old->port, '-P', $new->port,
			$mode // '--copy'
		]);
	chdir $cwd;
	ok($ok, 'pg_upgrade ' . $old->name . ' to ' . $new->name);
	return $ok;
}

1;
