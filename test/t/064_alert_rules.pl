# Alert rules: monitoring/snowid.rules.yml passes "promtool check rules",
# and "promtool test rules monitoring/snowid.rules.test.yml" fires each
# alert on the series that must fire it and on no other.  Every alert has
# a severity, a summary and a runbook_url naming a README section that
# exists.
#
# The unit tests must be able to fail: each alert's expression is replaced
# in turn by one that never fires and by its bare metric (fires on every
# series), and promtool must then report a failure.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Temp qw(tempdir);
use IPC::Run;
use Test::More;
use SnowidTest::Ecosystem;

my $root = abs_path(dirname(__FILE__) . '/../..');
my $rules = "$root/monitoring/snowid.rules.yml";
my $tests = "$root/monitoring/snowid.rules.test.yml";

sub slurp
{
	my ($file) = @_;
	open my $fh, '<', $file or die "could not read $file: $!";
	local $/;
	return scalar <$fh>;
}

sub spew
{
	my ($file, $text) = @_;
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $text;
	close $fh;
}

# Run a command; returns (exit status, stdout and stderr together).
sub run_cmd
{
	my (@cmd) = @_;
	my $out = '';
	IPC::Run::run(\@cmd, '>&', \$out, IPC::Run::timeout(120));
	return ($? >> 8, $out);
}

my ($rc, $out) = run_cmd('promtool', '--version');
if ($rc != 0)
{
	plan skip_all => 'promtool (Debian package prometheus) is not installed';
}
note($out =~ /^(promtool.*)$/m ? $1 : $out);

($rc, $out) = run_cmd('promtool', 'check', 'rules', $rules);
is($rc, 0, 'promtool check rules accepts monitoring/snowid.rules.yml') or diag($out);

($rc, $out) = run_cmd('promtool', 'test', 'rules', $tests);
is($rc, 0, 'promtool test rules passes monitoring/snowid.rules.test.yml') or diag($out);
like($out, qr/SUCCESS/, 'and says SUCCESS');

# The rules through a real YAML parser.
my $doc = eval { yaml_file($rules) } // {};
my @alerts = map { @{ $_->{rules} // [] } } @{ $doc->{groups} // [] };

# The alerts the README's runbook explains, one per condition to watch.
my @expected = qw(SnowidNodeNotGenerating SnowidLeaseExpiring
  SnowidLeaseRenewalFailing SnowidLeaseLost SnowidCallsRefusedNoLease
  SnowidClockOffsetHigh SnowidClockRegressionRefusals SnowidExhaustionWaits
  SnowidTimestampBitsRunningOut SnowidWorkerPoolLow SnowidWorkerPoolEmpty
  SnowidCoordinatorFenced);
is(join(' ', sort map { $_->{alert} // '(recording rule)' } @alerts),
	join(' ', sort @expected), 'the rules file holds exactly the expected alerts');

# GitHub's anchor for a heading: lowercase, punctuation dropped, spaces
# to hyphens.
sub anchor_of
{
	my ($heading) = @_;
	my $a = lc $heading;
	$a =~ s/[^\w\- ]//g;
	$a =~ s/ /-/g;
	return $a;
}
my %anchors = map { anchor_of($_) => 1 } (slurp("$root/README.md") =~ /^#+\s+(.+?)\s*$/mg);
ok(!$anchors{'no-such-alert'} && $anchors{'alert-runbook'},
	'the anchor check tells an existing README section from a missing one');

my $tested = slurp($tests);
foreach my $a (@alerts)
{
	my $name = $a->{alert} // '?';
	like($a->{labels}{severity} // '', qr/^(critical|warning|info)$/, "$name: severity label");
	ok(length($a->{annotations}{summary} // ''), "$name: summary");
	my ($anchor) = ($a->{annotations}{runbook_url} // '') =~ /^README\.md#(.+)$/;
	ok($anchor && $anchors{$anchor},
		"$name: runbook_url names a README section (" . ($a->{annotations}{runbook_url} // 'none') . ')');
	like($tested, qr/alertname: \Q$name\E\n/, "$name: has unit tests");
}

# ---- mutations: every alert's tests must be able to fail ---------------

my $dir = tempdir(CLEANUP => 1);
copy($tests, "$dir/snowid.rules.test.yml") or die "copy: $!";
my $text = slurp($rules);

# The rules file with the expression of one alert replaced.
sub with_expr
{
	my ($name, $expr) = @_;
	my $t = $text;
	$t =~ s/(- alert: \Q$name\E\n(?:.*\n)*?\s+expr: ).*\n/$1$expr\n/
	  or die "no expr for $name";
	return $t;
}

foreach my $a (@alerts)
{
	my $name = $a->{alert} or next;
	my ($metric) = $a->{expr} =~ /\b(snowid_[a-z_]+)/;

	spew("$dir/snowid.rules.yml", with_expr($name, 'vector(1) == 0'));
	($rc, $out) = run_cmd('promtool', 'test', 'rules', "$dir/snowid.rules.test.yml");
	isnt($rc, 0, "$name: a rule that never fires fails its unit tests");

	spew("$dir/snowid.rules.yml", with_expr($name, $metric));
	($rc, $out) = run_cmd('promtool', 'test', 'rules', "$dir/snowid.rules.test.yml");
	isnt($rc, 0, "$name: a rule firing on every $metric series fails its unit tests");
}

done_testing();
