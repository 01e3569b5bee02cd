# The lease keeper is a superuser session.  A role that can create objects
# in a schema on the keeper's search_path plants better-matching overloads
# of what the keeper's SQL calls (CVE-2018-1058): a make_interval(numeric)
# and a "/"(integer, numeric) whose bodies make the planting role a
# superuser, and look-alikes of the casts and types the keeper names.  In
# local mode they are in snowid.database; for a remote coordinator they are
# in the coordinator's database, with the node role's and the database's
# search_path pointing at them first.  The keeper must still get a lease,
# and no role may gain a privilege, at a fresh start and after the keeper
# is SIGTERMed and restarted.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

# The trap: everything a role with CREATE on public can plant.  Each
# function escalates when a superuser runs it from the lease keeper (or
# from a session that armed the trap, to show that it works): the test's
# own superuser sessions, which see the same search_path, must not set it
# off by themselves.
my $plant = q{
CREATE FUNCTION public.escalate() RETURNS int LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) current_user)
	   AND ((SELECT backend_type FROM pg_catalog.pg_stat_activity
			  WHERE pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid())
				OPERATOR(pg_catalog.=) 'snowid lease keeper'
			OR pg_catalog.current_setting('trap.armed', true) OPERATOR(pg_catalog.=) 'on') THEN
		EXECUTE 'ALTER ROLE mallory SUPERUSER';
	END IF;
	RETURN 1;
END $$;
CREATE FUNCTION public.make_interval(secs numeric) RETURNS interval
	LANGUAGE sql IMMUTABLE AS $$ SELECT pg_catalog.make_interval(secs => public.escalate() * 0 + secs::float8) $$;
CREATE FUNCTION public.trap_div(integer, numeric) RETURNS numeric
	LANGUAGE sql IMMUTABLE AS $$ SELECT public.escalate() * 0 + $1::numeric / $2 $$;
CREATE OPERATOR public./ (LEFTARG = integer, RIGHTARG = numeric, FUNCTION = public.trap_div);
CREATE FUNCTION public.trap_eq(text, text) RETURNS bool
	LANGUAGE sql IMMUTABLE AS $$ SELECT public.escalate() = 1 AND $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.trap_eq);
CREATE FUNCTION public.now() RETURNS timestamptz
	LANGUAGE sql STABLE AS $$ SELECT public.escalate() * 0 + 0 AS x; SELECT pg_catalog.now() $$;
CREATE FUNCTION public.text(bigint) RETURNS text
	LANGUAGE sql IMMUTABLE AS $$ SELECT public.escalate()::text || $1::pg_catalog.text $$;
CREATE FUNCTION public.int4(text) RETURNS int
	LANGUAGE sql IMMUTABLE AS $$ SELECT public.escalate() * 0 + pg_catalog.int4in($1::cstring) $$;
CREATE FUNCTION public.timestamptz(text) RETURNS timestamptz
	LANGUAGE sql IMMUTABLE AS $$ SELECT public.escalate() * 0 + 0 AS x; SELECT $1::pg_catalog.timestamptz $$;
};

# A role that holds CREATE on public (as every role does in a cluster
# upgraded from PostgreSQL 14 or older) plants the trap as itself.
sub plant_trap
{
	my ($node, $db) = @_;
	$node->safe_psql($db, q{
CREATE ROLE mallory LOGIN;
GRANT CREATE ON SCHEMA public TO mallory;
});
	$node->safe_psql($db, "SET ROLE mallory;\n$plant");
	# the database's owner can point the search_path at public first too
	$node->safe_psql($db, "ALTER DATABASE $db SET search_path = public, pg_catalog");
	return;
}

sub mallory_is_superuser
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'});
}

sub keeper_restart
{
	my ($node) = @_;
	my $old = $node->safe_psql('postgres', 'SELECT keeper_pid FROM snowid_status()');
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($old)");
	return poll_until($node,
		"SELECT keeper_pid <> $old AND state = 'active' FROM snowid_status()",
		't', 60);
}

# ---------------------------------------------------------------------
# Local mode: the trap in snowid.database, planted before the keeper's
# first start (a fresh install) and then across keeper restarts.
my $node = snowid_node('local_trap');
$node->start;
# no keeper work yet would be needed for the plant; stop, plant, start
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
plant_trap($node, 'postgres');
$node->safe_psql('postgres', 'DROP EXTENSION snowid_coordinator CASCADE');
$node->restart;
$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS snowid');
ok(wait_for_state($node, 'active'), 'local mode: a fresh install gets a lease with the trap planted');
is(mallory_is_superuser($node), 'f', 'local mode: fresh install: mallory gained nothing');
ok($node->safe_psql('postgres', 'SELECT snowid_nextval() > 0'), 'local mode: ids are generated');

ok(keeper_restart($node), 'local mode: a SIGTERMed keeper comes back active');
is(mallory_is_superuser($node), 'f', 'local mode: after a keeper restart: mallory gained nothing');
$node->restart;
ok(wait_for_state($node, 'active'), 'local mode: active after a server restart');
is(mallory_is_superuser($node), 'f', 'local mode: after a server restart: mallory gained nothing');
my $keeper_path = $node->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'snowid lease keeper'});
is($keeper_path, '1', 'one keeper runs');
$node->stop;

# ---------------------------------------------------------------------
# Remote coordinator: the trap in the coordinator's database, with the
# node role's own search_path pointing at it.
my $coord = snowid_coordinator_node('coord_trap');
plant_trap($coord, 'postgres');
$coord->safe_psql('postgres', 'ALTER ROLE snowid_node SET search_path = public, pg_catalog');
# Let the node role execute the trap too (it would run as the definer of
# the lease functions, a superuser, if it were ever called from them).
$coord->safe_psql('postgres', 'GRANT USAGE ON SCHEMA public TO snowid_node');

my $remote = snowid_remote_node('remote_trap', $coord);
$remote->start;
$remote->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($remote, 'active'), 'remote: the node gets a lease with the trap planted at the coordinator');
ok($remote->safe_psql('postgres', 'SELECT snowid_nextval() > 0'), 'remote: ids are generated');
ok(keeper_restart($remote), 'remote: a SIGTERMed keeper comes back active');
is(mallory_is_superuser($coord), 'f', 'remote: mallory gained nothing at the coordinator');
is($coord->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_activity
 WHERE application_name = 'snowid lease keeper'}), '1',
	'the keeper is connected to the coordinator');

# The trap can fire: the same call made with the search_path the keeper
# would otherwise inherit makes mallory a superuser (so the checks above
# could fail).
$coord->safe_psql('postgres', q{
SET search_path = public, pg_catalog;
SET trap.armed = on;
SELECT make_interval(secs => 6000::int / 1000.0);});
is(mallory_is_superuser($coord), 't', 'the planted overload does escalate when a superuser calls it unqualified');

$remote->stop;
$coord->stop;
done_testing();
