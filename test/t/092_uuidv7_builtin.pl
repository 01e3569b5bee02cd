# snowid_uuidv7() next to PostgreSQL 18's built-in uuidv7(), across
# backends: ours are monotonic across all backends of the server (one
# shared word), the built-in's within each backend only (a static in the
# backend).
#
#  (a) Two sessions take turns: every snowid_uuidv7() is above the one
#      before it, whichever session made it; each session's uuidv7() values
#      rise within that session.  (How often the built-in's go back between
#      the two sessions is only reported: it depends on timing.)
#  (b) The server's clock steps back 2 s (libfaketime) between a UUID made
#      in session A and one made in a new session B: B's snowid_uuidv7() is
#      still above A's (the shared word carries on), B's uuidv7() is below
#      A's (a new backend follows the clock), and A's next uuidv7() is above
#      its last (within a backend it stays monotonic).
# Skips before 18 (no built-in uuidv7()).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SnowidTest;

my $node = snowid_node('uuidv7');
plan skip_all => 'the built-in uuidv7() needs PostgreSQL 18 or later (this is '
  . $node->pg_version . ')'
  unless $node->pg_version >= 18;
plan skip_all => 'libfaketime is not installed (Debian package libfaketime)'
  unless faketime_lib();

my $clock_file = $node->basedir . '/faketime.rc';
set_clock_offset($clock_file, '+0');
start_with_faketime($node, $clock_file);
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');

# ---- (a) two sessions in turn ----
my %session = map { $_ => $node->background_psql('postgres') } qw(a b);
my (@ours, %theirs, @theirs_all);
for my $i (1 .. 300)
{
	for my $s (qw(a b))
	{
		my ($o, $t) = split /\|/,
		  $session{$s}->query_safe('SELECT snowid_uuidv7(), uuidv7()');
		push @ours, $o;
		push @{ $theirs{$s} }, $t;
		push @theirs_all, $t;
	}
}

# Strictly increasing, compared as the server compares uuids (their text
# forms sort the same way: fixed-width lowercase hex).
sub rises
{
	my @v = @_;
	for my $i (1 .. $#v)
	{
		return "$v[$i - 1] then $v[$i] (at $i)" unless $v[$i] gt $v[$i - 1];
	}
	return '';
}
is(rises(@ours), '',
	'snowid_uuidv7(): every UUID above the one before, across both sessions ('
	  . scalar(@ours) . ')');
is(rises(@{ $theirs{$_} }), '', "uuidv7(): rising within session $_")
  for qw(a b);
my $backwards = grep { $theirs_all[$_] lt $theirs_all[ $_ - 1 ] } 1 .. $#theirs_all;
note "uuidv7() went back $backwards times out of $#theirs_all between the two sessions";

# ---- (b) a step back of the clock ----
my ($ours_a, $theirs_a) = split /\|/,
  $session{a}->query_safe('SELECT snowid_uuidv7(), uuidv7()');
set_clock_offset($clock_file, '-2');
my $b = $node->background_psql('postgres');
my ($ours_b, $theirs_b) = split /\|/,
  $b->query_safe('SELECT snowid_uuidv7(), uuidv7()');
my ($theirs_a2) = $session{a}->query_safe('SELECT uuidv7()');
ok($ours_b gt $ours_a,
	"snowid_uuidv7() in a new session after the step is above the last one ($ours_a < $ours_b)");
ok($theirs_b lt $theirs_a,
	"uuidv7() in a new session after the step follows the clock back ($theirs_b < $theirs_a)");
ok($theirs_a2 gt $theirs_a,
	"uuidv7() in the old session stays monotonic ($theirs_a < $theirs_a2)");
is( $node->safe_psql('postgres',
		"SELECT snowid_uuidv7_timestamp('$ours_b') >= snowid_uuidv7_timestamp('$ours_a')"),
	't', 'snowid_uuidv7() runs ahead of the stepped clock rather than back');

$b->quit;
$session{$_}->quit for qw(a b);
set_clock_offset($clock_file, '+0');
$node->stop;
done_testing();
