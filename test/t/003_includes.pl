# The include graph of src/ (scripts/check_includes.sh): no cycle, no
# arrow from a lower layer to a higher one, every file in a layer, no file
# that shadows a system header.  The checker runs on the tree, and on
# copies of src/ with one violation each, which it must report.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Copy qw(copy);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

my $root  = abs_path(dirname(__FILE__) . '/../..');
my $check = "$root/scripts/check_includes.sh";

# Run the checker on $dir; returns (exit status, output).
sub run_check
{
	my ($dir) = @_;
	my ($stdout, $stderr);
	IPC::Run::run([ 'bash', $check, $dir ], '>', \$stdout, '2>', \$stderr);
	return ($? >> 8, $stdout . $stderr);
}

# A copy of src/ in a new directory, changed by $edit->($dir).
sub copy_of_src
{
	my ($edit) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	opendir(my $dh, "$root/src") or die "could not read $root/src: $!";
	foreach my $f (grep { /\.[ch]$/ } readdir $dh)
	{
		copy("$root/src/$f", "$dir/$f") or die "could not copy $f: $!";
	}
	closedir $dh;
	$edit->($dir);
	return $dir;
}

sub append_line
{
	my ($file, $line) = @_;
	open my $fh, '>>', $file or die "could not write $file: $!";
	print $fh "$line\n";
	close $fh;
	return;
}

my ($rc, $out) = run_check("$root/src");
chomp $out;
is($rc, 0, 'the tree passes') or diag($out);
like($out, qr/no cycle, no arrow from a lower layer to a higher one/,
	"it says what it checked: $out");

my @cases = (
	[
		'an arrow from a lower layer to a higher one',
		sub { append_line("$_[0]/layout.h", '#include "shmem.h"') },
		qr/layout\.h:\d+: includes "shmem\.h": layer plain may not include layer shared/
	],
	[
		'an arrow up from the keeper to the entry point',
		sub { append_line("$_[0]/keeper.c", '#include "snowid.c"') },
		qr/keeper\.c:\d+: includes "snowid\.c": layer keeper may not include layer entry/
	],
	[
		'a cycle within one layer',
		sub
		{
			append_line("$_[0]/layout.h", '#include "base32.h"');
			append_line("$_[0]/base32.h", '#include "layout.h"');
		},
		qr/include cycle: .*(base32\.h.*layout\.h|layout\.h.*base32\.h)/
	],
	[
		'a file that includes itself',
		sub { append_line("$_[0]/clock.h", '#include "clock.h"') },
		qr/clock\.h: includes itself/
	],
	[
		'a file in no layer',
		sub { append_line("$_[0]/orphan.h", '/* new */') },
		qr/orphan\.h: belongs to no layer/
	],
	[
		'a layer naming a file that is gone',
		sub { unlink("$_[0]/uuidv7.c") or die "unlink: $!" },
		qr/layer sql names uuidv7\.c, which is not in/
	],
	[
		'a header that shadows a system header',
		sub { append_line("$_[0]/time.h", '/* shadows <time.h> */') },
		qr/clock\.c:\d+: includes <time\.h>, which .*time\.h shadows/
	],);

foreach my $case (@cases)
{
	my ($label, $edit, $expected) = @$case;
	my $dir = copy_of_src($edit);
	my ($rc, $out) = run_check($dir);
	is($rc, 1, "$label: the checker fails");
	like($out, $expected, "$label: it names the violation");
}

done_testing();
