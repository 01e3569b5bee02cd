# The SPI transport (local mode) must see a WARNING raised while a lease
# transaction commits, whatever log_min_messages says: such a commit is not
# confirmed.  Here a deferred trigger warns at commit, with
# log_min_messages = error (so the server would not log the warning).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $node = snowid_node('warn', conf => "log_min_messages = error\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
ok(wait_for_state($node, 'active'), 'active');

$node->safe_psql('postgres', q{
CREATE FUNCTION public.warn_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE WARNING 'commit-time warning (test)';
	RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER warn_at_commit AFTER UPDATE ON snowid_coordinator.leases
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.warn_at_commit();
});
ok(poll_until($node,
	q{SELECT state = 'expired' AND detail LIKE '%commit not confirmed: commit-time warning%' FROM snowid_status()},
	't', 20), 'renewals whose commit warned are not confirmed: the lease expires');
my ($state) = psql_error($node, 'postgres', 'SELECT snowid_nextval()');
is($state, '57P03', 'generation is refused');

$node->safe_psql('postgres', 'DROP TRIGGER warn_at_commit ON snowid_coordinator.leases');
ok(wait_for_state($node, 'active', 20), 'without the warning, renewals count again');
$node->stop;
done_testing();
