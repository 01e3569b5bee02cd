# Keyed public ids and their key file: permissions, reloading, rotation,
# broken files, tampered ids; and what a node without preloading says.
#
# Expected public ids are computed here in Perl from the documented
# construction (HMAC-SHA-256 Feistel rounds over "snw1" || round || half,
# 31/32-bit halves, 10 rounds), not by the extension.
use strict;
use warnings;

use Digest::SHA qw(hmac_sha256);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SnowidTest;

my @alphabet = split //, '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

sub base32
{
	my ($v) = @_;
	return join '', map { $alphabet[ ($v >> (5 * $_)) & 31 ] } reverse 0 .. 12;
}

# The public id of $id under key version $version (hex key $keyhex).
sub public_ref
{
	my ($version, $keyhex, $id) = @_;
	my $key = pack('H*', $keyhex);
	my ($hi, $lo) = ($id >> 32, $id & 0xffffffff);
	my $f = sub {
		my ($round, $x) = @_;
		return unpack('Q>',
			substr(hmac_sha256('snw1' . chr($round) . pack('Q>', $x), $key), 0, 8));
	};
	for my $round (0 .. 9)
	{
		if ($round % 2 == 0) { $hi ^= $f->($round, $lo) & 0x7fffffff; }
		else { $lo ^= $f->($round, $hi) & 0xffffffff; }
	}
	return $version . base32(($hi << 32) | $lo);
}

# Hex keys that look random, and the same at every run.
sub test_key
{
	my ($seed, $bytes) = @_;
	return join '', map { sprintf '%02x', ($_ * 37 + $seed * 101 + 11) % 256 }
	  0 .. $bytes - 1;
}
my $key1 = test_key(1, 32);
my $key2 = test_key(2, 48);
my $keyA = test_key(3, 64);

my $node = snowid_node('public_ids');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');
my $datadir = $node->data_dir;
my $keyfile = "$datadir/public_id_keys";

# ---- No key file configured ----
my ($state, $message) =
  psql_error($node, 'postgres', 'SELECT snowid_to_public(1::snowid)');
is($state, '55000', 'no key file set: SQLSTATE 55000');
like($message, qr/snowid has no keys for public ids/, 'no key file set: message');

# The setting names a file, is superuser-only, and reloadable.
$node->safe_psql('postgres', 'CREATE ROLE alice LOGIN');
($state) = psql_error($node, 'postgres', 'SHOW snowid.public_id_keys_file',
	[ '-U', 'alice' ]);
is($state, '42501', 'an ordinary role cannot read snowid.public_id_keys_file');
is( $node->safe_psql('postgres',
		"SELECT context FROM pg_settings WHERE name = 'snowid.public_id_keys_file'"),
	'sighup', 'snowid.public_id_keys_file is reloadable');

# ---- Key files ----
sub write_file_0600
{
	my ($path, $text) = @_;
	open my $fh, '>', $path or die "could not write $path: $!";
	print $fh $text;
	close $fh or die "could not write $path: $!";
	chmod 0600, $path or die "could not chmod $path: $!";
	return;
}
my $dir = $node->basedir;
write_file_0600("$dir/keys_v1", "# version 1\n1:$key1\n");
write_file_0600("$dir/keys_v1v2", "# rotation: 2 is the newest\n1:$key1\n2:$key2\n");
write_file_0600("$dir/keys_v2", "2:$key2\n");
write_file_0600("$dir/keys_bad", "1:$key1\n\n2:${key2}zz\n");
write_file_0600("$dir/keys_dup", "1:$key1\n1:$key2\n");
write_file_0600("$dir/keys_none", "# nothing here yet\n\n");
write_file_0600("$dir/keys_short", "1:" . substr($key1, 0, 62) . "\n");

write_file_0600($keyfile, "1:$key1\n");
$node->append_conf('postgresql.conf', "snowid.public_id_keys_file = 'public_id_keys'");
$node->reload;
ok(poll_until($node, "SELECT current_setting('snowid.public_id_keys_file')",
		'public_id_keys'), 'the key file setting takes effect on reload');

my @ids = (0, 1, 252764451642540032, 9223372036854775807);
my $id = 252764451642540032;
for my $i (@ids)
{
	is($node->safe_psql('postgres', "SELECT snowid_to_public(${i}::snowid)"),
		public_ref('1', $key1, $i), "public id of $i matches the reference");
}

# ---- One session through rotation and broken files ----
#
# The file changes under a single backend (psql's \! between statements),
# which must notice each change by itself.  Each statement prints
# "label=result" or "label=SQLSTATE: message".
$node->safe_psql('postgres', q{
CREATE FUNCTION try(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE query INTO result;
	RETURN result;
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
});

my $p1 = public_ref('1', $key1, $id);
my $p2 = public_ref('2', $key2, $id);
my @script;
sub step
{
	my ($label, $sql) = @_;
	push @script, "SELECT '$label=' || try(\$q\$$sql\$q\$);";
	return;
}
sub shell { push @script, "\\! $_[0]"; return; }

step('v1', "SELECT snowid_to_public(${id}::snowid)");
step('v1_back', "SELECT snowid_from_public('$p1')");
shell("cp $dir/keys_v1v2 $keyfile");
step('v2', "SELECT snowid_to_public(${id}::snowid)");
step('v2_back', "SELECT snowid_from_public('$p2')");
step('v1_after_rotation', "SELECT snowid_from_public('$p1')");
shell("cp $dir/keys_v2 $keyfile");
step('v1_retired', "SELECT snowid_from_public('$p1')");
step('v2_alone', "SELECT snowid_from_public('$p2')");
shell("chmod 644 $keyfile");
step('mode_644', "SELECT snowid_to_public(${id}::snowid)");
step('mode_644_decode', "SELECT snowid_from_public('$p2')");
shell("chmod 640 $keyfile");
step('mode_640', "SELECT snowid_to_public(${id}::snowid)");
shell("chmod 600 $keyfile");
step('mode_600', "SELECT snowid_to_public(${id}::snowid)");
shell("cp $dir/keys_bad $keyfile");
step('bad', "SELECT snowid_to_public(${id}::snowid)");
shell("cp $dir/keys_dup $keyfile");
step('dup', "SELECT snowid_to_public(${id}::snowid)");
shell("cp $dir/keys_none $keyfile");
step('none', "SELECT snowid_to_public(${id}::snowid)");
shell("cp $dir/keys_short $keyfile");
step('short', "SELECT snowid_to_public(${id}::snowid)");
shell("mv $keyfile $keyfile.away");
step('missing', "SELECT snowid_to_public(${id}::snowid)");
shell("mv $keyfile.away $keyfile");
shell("cp $dir/keys_v1v2 $keyfile");
step('back', "SELECT snowid_to_public(${id}::snowid)");
step('back_v1', "SELECT snowid_from_public('$p1')");

my ($rc, $out, $err) = $node->psql('postgres', join("\n", @script));
is($rc, 0, 'the session ran to its end') or diag($err);
my %r = map { /^([a-z0-9_]+)=(.*)$/ ? ($1 => $2) : () } split /\n/, $out;

is($r{v1},      $p1, 'version 1 encodes');
is($r{v1_back}, $id, 'version 1 decodes');
is($r{v2},      $p2, 'after adding version 2, new public ids use it (same session)');
is($r{v2_back}, $id, 'version 2 decodes');
is($r{v1_after_rotation}, $id, 'ids of version 1 still decode after the rotation');
like($r{v1_retired}, qr/^22P02: invalid public snowid: "$p1"$/,
	'with version 1 removed from the file, its ids are refused');
is($r{v2_alone}, $id, 'version 2 alone decodes');
like($r{mode_644},
	qr/^F0000: snowid public id key file "public_id_keys" has group or world access$/,
	'a world-readable key file is refused');
like($r{mode_644_decode}, qr/^F0000: .*group or world access/,
	'... for decoding too');
like($r{mode_640}, qr/^F0000: .*group or world access/,
	'a group-readable key file is refused');
is($r{mode_600}, $p2, 'mode 0600 again: works');
like($r{bad},
	qr/^F0000: invalid snowid public id key file "public_id_keys" at line 3$/,
	'a malformed key: refused with its line number');
like($r{dup}, qr/^F0000: invalid snowid public id key file "public_id_keys" at line 2$/,
	'a version listed twice: refused');
like($r{none}, qr/^F0000: snowid public id key file "public_id_keys" lists no key$/,
	'a file with no key: refused');
like($r{short}, qr/^F0000: invalid snowid public id key file "public_id_keys" at line 1$/,
	'a key shorter than 32 bytes: refused');
like($r{missing},
	qr/^58P01: could not open snowid public id key file "public_id_keys": No such file or directory$/,
	'a missing key file: 58P01');
is($r{back},    $p2, 'a good file again: works');
is($r{back_v1}, $id, '... and old ids decode');

# The details say what is wrong with a file, never what is in it.
($state, $message, $err) = psql_error($node, 'postgres', qq{
\\! cp $dir/keys_bad $keyfile
SELECT snowid_to_public(1::snowid);
});
is($state, 'F0000', 'malformed file: F0000');
like($err, qr/DETAIL:\s+A key must be written as hexadecimal digits, two per byte\./,
	'malformed file: the detail says why');
my $log = slurp_file($node->logfile);
for my $k ($key1, $key2)
{
	ok(index($err . $out, substr($k, 0, 16)) < 0 && index($log, substr($k, 0, 16)) < 0,
		'no key material in errors or the server log');
}
system("cp $dir/keys_v1v2 $keyfile") == 0 or die;

# ---- Tampered public ids ----
#
# Every single-character change of a public id either decodes to another
# id or fails cleanly with 22P02; the server stays up.
my $outcomes = $node->safe_psql('postgres', qq{
SELECT string_agg(outcome || ':' || n, ' ' ORDER BY outcome)
FROM (SELECT CASE
			WHEN r ~ '^[0-9]+\$' AND r <> '$id' THEN 'other_id'
			WHEN r = '$id' THEN 'same_id'
			ELSE substr(r, 1, 5) END AS outcome, count(*) AS n
	FROM (SELECT try(format('SELECT snowid_from_public(%L)',
				overlay('$p2' placing c from pos for 1))) AS r
		FROM generate_series(1, 14) pos,
			unnest(string_to_array('0 1 7 8 9 A H Z U # z', ' ')) c
		WHERE substr('$p2', pos, 1) <> upper(c)) t
	GROUP BY 1) s});
note("tampered outcomes: $outcomes");
unlike($outcomes, qr/same_id/, 'no tampered public id decodes to the same id');
like($outcomes, qr/other_id:\d+/, 'tampered public ids decode to other ids');
unlike($outcomes, qr/(^| )(?!other_id|22P02)[^ ]+:/,
	'tampered public ids give another id or 22P02, nothing else');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is still up');

# ---- Another file, by absolute path, on reload ----
write_file_0600("$dir/keys_abs", "A:$keyA\n");
$node->adjust_conf('postgresql.conf', 'snowid.public_id_keys_file', "'$dir/keys_abs'");
$node->reload;
ok(poll_until($node, "SELECT snowid_to_public(${id}::snowid)",
		public_ref('A', $keyA, $id)),
	'after a reload, the file named by an absolute path is used');
($state, $message) =
  psql_error($node, 'postgres', "SELECT snowid_from_public('$p1')");
is($state, '22P02', 'keys of the old file are gone after the reload');

$node->stop;

# ---- Without shared_preload_libraries ----
#
# The setting is not defined then, and a placeholder any user can SET
# must never name the key file.
my $plain = PostgreSQL::Test::Cluster->new('not_preloaded_formats');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION snowid');
is($plain->safe_psql('postgres', 'SELECT snowid_to_base32(42::snowid)'),
	'000000000001A', 'base32 works without preloading');
($state, $message, $err) = psql_error($plain, 'postgres', qq{
SET snowid.public_id_keys_file = '$keyfile';
SELECT snowid_to_public(1::snowid);
});
is($state, '55000', 'public ids without preloading: 55000, even with a placeholder set');
like($message, qr/snowid must be loaded via "shared_preload_libraries"/,
	'public ids without preloading: says what is wrong');
($state, $message) = psql_error($plain, 'postgres', 'SELECT snowid_uuidv7()');
is($state, '55000', 'snowid_uuidv7() without preloading: 55000');
is( $plain->safe_psql('postgres',
		"SELECT snowid_uuidv7_timestamp('017f22e2-79b0-7cc3-98c4-dc0c0c07398f')"),
	'2022-02-22 19:22:22+00', 'snowid_uuidv7_timestamp() works without preloading');
$plain->stop;

done_testing();
