# Packaging: META.json follows the PGXN Meta Spec 1.0.0 and agrees with
# the control files; "make install" with PG_CONFIG (and DESTDIR, as
# packagers use it) puts every file where that pg_config says.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname basename);
use File::Compare qw(compare);
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = abs_path(dirname(__FILE__) . '/../..');

sub slurp
{
	my ($file) = @_;
	open my $fh, '<', $file or die "could not read $file: $!";
	local $/;
	return scalar <$fh>;
}

# default_version of an extension's control file.
sub control_version
{
	my ($ext) = @_;
	my ($v) = slurp("$root/$ext.control") =~ /^\s*default_version\s*=\s*'([^']+)'/m;
	return $v;
}

# PGXN versions are SemVer; an extension version "1.0" is "1.0.0" there.
sub semver_of
{
	my ($v) = @_;
	my @parts = split /\./, $v;
	push @parts, 0 while @parts < 3;
	return join '.', @parts;
}

my $semver = qr/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)
	(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/x;
my $semver_part = qr/(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?/;
my $range = qr/^(?:0|(?:(?:[=!]=|[<>]=?)\s*)?$semver_part(?:,\s*(?:(?:[=!]=|[<>]=?)\s*)?$semver_part)*)$/;
my $term = qr/^[^\/\\\s[:cntrl:]]{2,}$/;
my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1
  artistic_2 bsd freebsd gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1
  lgpl_3_0 mit mozilla_1_0 mozilla_1_1 openssl perl_5 postgresql qpl_1_0
  ssleay sun zlib open_source restricted unrestricted unknown);

# ---- META.json ---------------------------------------------------------

my $meta = eval { JSON::PP->new->decode(slurp("$root/META.json")) };
ok($meta, 'META.json is valid JSON') or diag($@);
$meta //= {};
is(ref $meta, 'HASH', 'META.json is an object');

foreach my $key (qw(name abstract version maintainer license provides meta-spec))
{
	ok(exists $meta->{$key}, "META.json has the required key \"$key\"");
}
my %known = map { $_ => 1 } qw(name abstract version maintainer license
  provides meta-spec description generated_by tags no_index prereqs
  release_status resources);
my @unknown = grep { !$known{$_} && !/^[xX]_/ } sort keys %$meta;
is("@unknown", '', 'no keys the spec does not define (custom keys start with x_)');

like($meta->{name} // '', $term, 'name is a term (2+ characters, no slash, space or control character)');
like($meta->{version} // '', $semver, 'version is a SemVer');
ok(length($meta->{abstract} // '') > 0, 'abstract is not empty');
is($meta->{'meta-spec'}{version}, '1.0.0', 'meta-spec version 1.0.0');
my @maintainers = ref $meta->{maintainer} eq 'ARRAY' ? @{ $meta->{maintainer} } : ($meta->{maintainer} // ());
ok(@maintainers && !grep({ !defined || ref || $_ eq '' } @maintainers),
	'maintainer is a string or a list of strings');
my $license = $meta->{license} // '';
ok((!ref $license && $licenses{$license})
	  || (ref $license eq 'ARRAY' && @$license && !grep { !$licenses{$_} } @$license)
	  || (ref $license eq 'HASH' && %$license),
	"license is one the spec knows ($license)");
is($license, 'postgresql', 'license: the PostgreSQL License');
like(slurp("$root/LICENSE"), qr/^PostgreSQL License\n/, 'LICENSE holds it');
ok(!exists $meta->{release_status}
	  || $meta->{release_status} =~ /^(stable|testing|unstable)$/,
	'release_status is stable, testing or unstable');
ok(!exists $meta->{tags}
	  || (ref $meta->{tags} eq 'ARRAY'
		&& !grep { !/^[^\/\\[:cntrl:]]{2,255}$/ } @{ $meta->{tags} }),
	'tags are valid');

# Both extensions are provided, each with its file and its version, and
# the versions are the control files' default_version.
my @extensions = map { basename($_, '.control') } glob("$root/*.control");
is_deeply([ sort keys %{ $meta->{provides} // {} } ], [ sort @extensions ],
	'provides names every extension with a control file: ' . join(', ', sort @extensions));
foreach my $ext (sort @extensions)
{
	my $p = $meta->{provides}{$ext} // {};
	my $default = control_version($ext);
	ok(defined $default, "$ext.control has a default_version");
	like($p->{version} // '', $semver, "provides.$ext.version is a SemVer");
	is($p->{version}, semver_of($default),
		"provides.$ext.version matches $ext.control's default_version $default");
	ok(defined $p->{file} && -f "$root/$p->{file}", "provides.$ext.file exists ("
		  . ($p->{file} // 'none') . ')');
	is($p->{file}, "$ext--$default.sql",
		"provides.$ext.file is the install script of the default version");
	ok(!defined $p->{docfile} || -f "$root/$p->{docfile}", "provides.$ext.docfile exists");
	my @extra = grep { !/^(file|version|abstract|docfile|docpath)$/ && !/^[xX]_/ } keys %$p;
	is("@extra", '', "provides.$ext has no unknown keys");
}
is($meta->{version}, semver_of(control_version('snowid')),
	'the distribution version is the snowid extension\'s');

# prereqs: PostgreSQL 15.
my $prereqs = $meta->{prereqs} // {};
my @bad = grep { !/^(configure|build|test|runtime|develop)$/ } keys %$prereqs;
is("@bad", '', 'prereqs phases are known ones');
foreach my $phase (keys %$prereqs)
{
	foreach my $rel (keys %{ $prereqs->{$phase} })
	{
		like($rel, qr/^(requires|recommends|suggests|conflicts)$/, "prereqs.$phase.$rel is a known relationship");
		foreach my $dep (keys %{ $prereqs->{$phase}{$rel} })
		{
			like($prereqs->{$phase}{$rel}{$dep}, $range, "prereqs.$phase.$rel.$dep is a version range");
		}
	}
}
my $pg_range = $prereqs->{runtime}{requires}{PostgreSQL} // '';
like($pg_range, qr/(^|>=\s*)15\.0\.0/, "runtime requires PostgreSQL 15 ($pg_range)");

# ---- make install with PG_CONFIG and DESTDIR ---------------------------

my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my %dir;
foreach my $what (qw(sharedir pkglibdir))
{
	IPC::Run::run([ $pg_config, "--$what" ], '>', \my $out) or die "$pg_config --$what failed";
	chomp($dir{$what} = $out);
}
my $stage = PostgreSQL::Test::Utils::tempdir('stage');
my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[ 'make', '-s', '-C', $root, "PG_CONFIG=$pg_config", "DESTDIR=$stage", 'install' ],
	'>', \$out, '2>', \$err);
ok($ok, "PG_CONFIG=$pg_config make install (DESTDIR=$stage)") or diag("$out$err");

my @sql = map { basename($_) } glob("$root/snowid--*.sql"), glob("$root/snowid_coordinator--*.sql");
foreach my $file ((map { "$_.control" } @extensions), @sql)
{
	my $installed = "$stage$dir{sharedir}/extension/$file";
	ok(-f $installed && compare($installed, "$root/$file") == 0,
		"installed extension/$file is the tree's");
}
ok(-f "$stage$dir{pkglibdir}/snowid.so", 'installed snowid.so into pkglibdir');

done_testing();
