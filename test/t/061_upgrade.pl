# Versioning: every change to SQL objects ships as a new extension version
# with an upgrade script.  For each extension this installs every shipped
# version older than the default (today only 1.0 exists, so the oldest is
# the default and the update is a no-op), updates it with ALTER EXTENSION
# ... UPDATE, and compares the objects it then has with a fresh install of
# the default version in another database: functions (signature,
# volatility, strictness, parallel safety, security definer, settings,
# body), types, operators, operator classes and families with their
# members, casts, aggregates, tables, views and indexes with their
# columns, and privileges (ACLs, initial privileges for pg_dump).  The
# objects are the extension's members by pg_depend (deptype 'e').
#
# The versions come from the script file names in the source tree; the
# server must have this tree's scripts installed (make install).
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname basename);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowidTest;

my $root = abs_path(dirname(__FILE__) . '/../..');

sub slurp
{
	my ($file) = @_;
	open my $fh, '<', $file or die "could not read $file: $!";
	local $/;
	return scalar <$fh>;
}

# Version order: numeric parts compared as numbers ("1.10" > "1.9").
sub version_cmp
{
	my ($x, $y) = @_;
	my @x = split /\./, $x;
	my @y = split /\./, $y;
	while (@x || @y)
	{
		my ($p, $q) = (shift(@x) // 0, shift(@y) // 0);
		my $c = ($p =~ /^\d+$/ && $q =~ /^\d+$/) ? $p <=> $q : $p cmp $q;
		return $c if $c;
	}
	return 0;
}

# The shipped versions of $ext: install scripts ($ext--V.sql) and upgrade
# scripts ($ext--A--B.sql), from the file names.
sub shipped
{
	my ($ext) = @_;
	my (%install, @upgrades);
	foreach my $path (glob("$root/$ext--*.sql"))
	{
		my $f = basename($path);
		if ($f =~ /^\Q$ext\E--([^-]+)--([^-]+)\.sql$/)
		{
			push @upgrades, [ $1, $2 ];
		}
		elsif ($f =~ /^\Q$ext\E--([^-]+)\.sql$/)
		{
			$install{$1} = 1;
		}
		else
		{
			fail("unexpected script name $f");
		}
	}
	my ($default) = slurp("$root/$ext.control") =~ /^\s*default_version\s*=\s*'([^']+)'/m;
	return (\%install, \@upgrades, $default);
}

# The catalog picture of extension $ext in database $db, as sorted lines
# without OIDs.  $prelude runs first in the same transaction (to tamper
# with a copy and roll back).  Schema-qualified names everywhere
# (search_path = pg_catalog), privileges exploded into (grantee, grantor,
# privilege) triples with defaults made explicit.
my $snapshot_sql = <<'SQL';
CREATE FUNCTION pg_temp.acl(a aclitem[], kind "char", owner oid) RETURNS text
LANGUAGE sql STABLE AS $$
	SELECT COALESCE(string_agg(x, ' ' ORDER BY x), '(none)')
	  FROM (SELECT format('%s<-%s:%s%s',
					CASE e.grantee WHEN 0 THEN 'PUBLIC' ELSE e.grantee::regrole::text END,
					e.grantor::regrole, e.privilege_type,
					CASE WHEN e.is_grantable THEN '*' ELSE '' END) AS x
			  FROM aclexplode(COALESCE(a, acldefault(kind, owner))) e) s
$$;
SET search_path = pg_catalog;
WITH m AS (
	SELECT d.classid, d.objid, d.objsubid
	  FROM pg_depend d JOIN pg_extension x ON d.refobjid = x.oid
	 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	   AND x.extname = :'ext'
),
-- operator families: members, and the families of member classes
fam AS (
	SELECT objid AS oid FROM m WHERE classid = 'pg_opfamily'::regclass
	UNION
	SELECT c.opcfamily FROM m JOIN pg_opclass c ON c.oid = m.objid
	 WHERE m.classid = 'pg_opclass'::regclass
),
rel AS (
	SELECT c.* FROM m JOIN pg_class c ON c.oid = m.objid
	 WHERE m.classid = 'pg_class'::regclass
),
lines(line) AS (
	-- every member, whatever its kind
	SELECT 'member ' || pg_describe_object(classid, objid, objsubid) FROM m
	UNION ALL
	-- the extension itself
	SELECT format('extension %s schema=%s relocatable=%s version=%s config=%s conditions=%s',
			x.extname, x.extnamespace::regnamespace, x.extrelocatable, x.extversion,
			(SELECT string_agg(c::regclass::text, ',' ORDER BY c::regclass::text)
			   FROM unnest(x.extconfig) c),
			array_to_string(x.extcondition, ','))
	  FROM pg_extension x WHERE x.extname = :'ext'
	UNION ALL
	-- schemas
	SELECT format('schema %s acl=%s', n.nspname, pg_temp.acl(n.nspacl, 'n', n.nspowner))
	  FROM m JOIN pg_namespace n ON n.oid = m.objid
	 WHERE m.classid = 'pg_namespace'::regclass
	UNION ALL
	SELECT format('extension schema %s acl=%s', n.nspname, pg_temp.acl(n.nspacl, 'n', n.nspowner))
	  FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
	 WHERE x.extname = :'ext'
	UNION ALL
	-- functions, procedures, aggregates
	SELECT format('function %s kind=%s returns=%s retset=%s language=%s volatility=%s strict=%s '
				  'parallel=%s security_definer=%s leakproof=%s cost=%s rows=%s support=%s '
				  'config=%s args=[%s] acl=%s',
			p.oid::regprocedure, p.prokind, pg_get_function_result(p.oid), p.proretset,
			l.lanname, p.provolatile, p.proisstrict, p.proparallel, p.prosecdef,
			p.proleakproof, p.procost, p.prorows, p.prosupport::regproc,
			array_to_string(p.proconfig, ','), pg_get_function_arguments(p.oid),
			pg_temp.acl(p.proacl, 'f', p.proowner))
	  FROM m JOIN pg_proc p ON p.oid = m.objid JOIN pg_language l ON l.oid = p.prolang
	 WHERE m.classid = 'pg_proc'::regclass
	UNION ALL
	SELECT format('function %s body=%s bin=%s', p.oid::regprocedure, md5(p.prosrc), p.probin)
	  FROM m JOIN pg_proc p ON p.oid = m.objid
	 WHERE m.classid = 'pg_proc'::regclass
	UNION ALL
	SELECT format('aggregate %s kind=%s direct=%s transfn=%s finalfn=%s combinefn=%s '
				  'serialfn=%s deserialfn=%s mtransfn=%s minvtransfn=%s mfinalfn=%s '
				  'finalextra=%s mfinalextra=%s finalmodify=%s mfinalmodify=%s sortop=%s '
				  'transtype=%s transspace=%s mtranstype=%s mtransspace=%s initval=%s minitval=%s',
			a.aggfnoid::regprocedure, a.aggkind, a.aggnumdirectargs,
			a.aggtransfn::oid::regprocedure, a.aggfinalfn::oid::regprocedure,
			a.aggcombinefn::oid::regprocedure, a.aggserialfn::oid::regprocedure,
			a.aggdeserialfn::oid::regprocedure, a.aggmtransfn::oid::regprocedure,
			a.aggminvtransfn::oid::regprocedure, a.aggmfinalfn::oid::regprocedure,
			a.aggfinalextra, a.aggmfinalextra, a.aggfinalmodify, a.aggmfinalmodify,
			a.aggsortop::regoperator, a.aggtranstype::regtype, a.aggtransspace,
			a.aggmtranstype::regtype, a.aggmtransspace, a.agginitval, a.aggminitval)
	  FROM m JOIN pg_aggregate a ON a.aggfnoid = m.objid
	 WHERE m.classid = 'pg_proc'::regclass
	UNION ALL
	-- types (base, domain, enum, composite, range)
	SELECT format('type %s type=%s len=%s byval=%s category=%s preferred=%s delim=%s '
				  'elem=%s array=%s input=%s output=%s receive=%s send=%s modin=%s modout=%s '
				  'analyze=%s subscript=%s align=%s storage=%s notnull=%s base=%s typmod=%s '
				  'ndims=%s collation=%s default=%s acl=%s',
			format_type(t.oid, NULL), t.typtype, t.typlen, t.typbyval, t.typcategory,
			t.typispreferred, t.typdelim, t.typelem::regtype, t.typarray::regtype,
			t.typinput::oid::regprocedure, t.typoutput::oid::regprocedure,
			t.typreceive::oid::regprocedure, t.typsend::oid::regprocedure,
			t.typmodin::oid::regprocedure, t.typmodout::oid::regprocedure,
			t.typanalyze::oid::regprocedure, t.typsubscript::oid::regprocedure,
			t.typalign, t.typstorage, t.typnotnull, t.typbasetype::regtype, t.typtypmod,
			t.typndims, t.typcollation, t.typdefault, pg_temp.acl(t.typacl, 'T', t.typowner))
	  FROM m JOIN pg_type t ON t.oid = m.objid
	 WHERE m.classid = 'pg_type'::regclass
	UNION ALL
	SELECT format('type %s enum labels=%s', format_type(t.oid, NULL),
			(SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
			   FROM pg_enum e WHERE e.enumtypid = t.oid))
	  FROM m JOIN pg_type t ON t.oid = m.objid
	 WHERE m.classid = 'pg_type'::regclass AND t.typtype = 'e'
	UNION ALL
	SELECT format('type %s constraint %s %s', format_type(c.contypid, NULL), c.conname,
			pg_get_constraintdef(c.oid))
	  FROM m JOIN pg_constraint c ON c.contypid = m.objid
	 WHERE m.classid = 'pg_type'::regclass
	UNION ALL
	SELECT format('type %s attribute %s %s %s', format_type(t.oid, NULL), a.attnum, a.attname,
			format_type(a.atttypid, a.atttypmod))
	  FROM m JOIN pg_type t ON t.oid = m.objid
	  JOIN pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
	 WHERE m.classid = 'pg_type'::regclass AND t.typtype = 'c'
	UNION ALL
	SELECT format('type %s range subtype=%s opclass=%s canonical=%s subdiff=%s multirange=%s',
			r.rngtypid::regtype, r.rngsubtype::regtype,
			(SELECT oc.opcname FROM pg_opclass oc WHERE oc.oid = r.rngsubopc),
			r.rngcanonical::oid::regprocedure, r.rngsubdiff::oid::regprocedure,
			r.rngmultitypid::regtype)
	  FROM m JOIN pg_range r ON r.rngtypid = m.objid
	 WHERE m.classid = 'pg_type'::regclass
	UNION ALL
	-- operators
	SELECT format('operator %s kind=%s result=%s code=%s commutator=%s negator=%s '
				  'restrict=%s join=%s merges=%s hashes=%s',
			o.oid::regoperator, o.oprkind, o.oprresult::regtype,
			o.oprcode::oid::regprocedure, o.oprcom::regoperator, o.oprnegate::regoperator,
			o.oprrest::oid::regprocedure, o.oprjoin::oid::regprocedure,
			o.oprcanmerge, o.oprcanhash)
	  FROM m JOIN pg_operator o ON o.oid = m.objid
	 WHERE m.classid = 'pg_operator'::regclass
	UNION ALL
	-- operator classes and families, and every operator and support
	-- function in the families
	SELECT format('operator class %s.%s using %s for=%s default=%s family=%s.%s keytype=%s',
			c.opcnamespace::regnamespace, c.opcname, am.amname, c.opcintype::regtype,
			c.opcdefault, f.opfnamespace::regnamespace, f.opfname, c.opckeytype::regtype)
	  FROM m JOIN pg_opclass c ON c.oid = m.objid
	  JOIN pg_am am ON am.oid = c.opcmethod JOIN pg_opfamily f ON f.oid = c.opcfamily
	 WHERE m.classid = 'pg_opclass'::regclass
	UNION ALL
	SELECT format('operator family %s.%s using %s', f.opfnamespace::regnamespace, f.opfname,
			am.amname)
	  FROM fam JOIN pg_opfamily f ON f.oid = fam.oid JOIN pg_am am ON am.oid = f.opfmethod
	UNION ALL
	SELECT format('operator family %s.%s using %s: operator %s (%s, %s) %s purpose=%s sortfamily=%s',
			f.opfnamespace::regnamespace, f.opfname, am.amname, ao.amopstrategy,
			ao.amoplefttype::regtype, ao.amoprighttype::regtype, ao.amopopr::regoperator,
			ao.amoppurpose,
			(SELECT sf.opfname FROM pg_opfamily sf WHERE sf.oid = ao.amopsortfamily))
	  FROM fam JOIN pg_opfamily f ON f.oid = fam.oid JOIN pg_am am ON am.oid = f.opfmethod
	  JOIN pg_amop ao ON ao.amopfamily = f.oid
	UNION ALL
	SELECT format('operator family %s.%s using %s: function %s (%s, %s) %s',
			f.opfnamespace::regnamespace, f.opfname, am.amname, ap.amprocnum,
			ap.amproclefttype::regtype, ap.amprocrighttype::regtype,
			ap.amproc::oid::regprocedure)
	  FROM fam JOIN pg_opfamily f ON f.oid = fam.oid JOIN pg_am am ON am.oid = f.opfmethod
	  JOIN pg_amproc ap ON ap.amprocfamily = f.oid
	UNION ALL
	-- casts
	SELECT format('cast (%s as %s) function=%s context=%s method=%s',
			c.castsource::regtype, c.casttarget::regtype, c.castfunc::regprocedure,
			c.castcontext, c.castmethod)
	  FROM m JOIN pg_cast c ON c.oid = m.objid
	 WHERE m.classid = 'pg_cast'::regclass
	UNION ALL
	-- tables, views, sequences, indexes: kind, options, privileges
	SELECT format('relation %s kind=%s persistence=%s replident=%s rls=%s force_rls=%s '
				  'options=%s acl=%s',
			r.oid::regclass, r.relkind, r.relpersistence, r.relreplident,
			r.relrowsecurity, r.relforcerowsecurity, array_to_string(r.reloptions, ','),
			pg_temp.acl(r.relacl, (CASE r.relkind WHEN 'S' THEN 's' ELSE 'r' END)::"char", r.relowner))
	  FROM rel r
	UNION ALL
	SELECT format('relation %s column %s %s %s notnull=%s default=%s identity=%s '
				  'generated=%s collation=%s acl=%s',
			r.oid::regclass, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
			a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attidentity, a.attgenerated,
			a.attcollation, COALESCE(a.attacl::text, '(none)'))
	  FROM rel r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
	  LEFT JOIN pg_attrdef ad ON ad.adrelid = r.oid AND ad.adnum = a.attnum
	UNION ALL
	SELECT format('relation %s constraint %s %s', r.oid::regclass, c.conname,
			pg_get_constraintdef(c.oid))
	  FROM rel r JOIN pg_constraint c ON c.conrelid = r.oid
	UNION ALL
	SELECT format('relation %s index %s', r.oid::regclass, pg_get_indexdef(i.indexrelid))
	  FROM rel r JOIN pg_index i ON i.indrelid = r.oid
	UNION ALL
	SELECT format('relation %s trigger %s', r.oid::regclass, pg_get_triggerdef(t.oid))
	  FROM rel r JOIN pg_trigger t ON t.tgrelid = r.oid AND NOT t.tgisinternal
	UNION ALL
	SELECT format('relation %s policy %s cmd=%s permissive=%s roles=%s using=%s check=%s',
			r.oid::regclass, p.polname, p.polcmd, p.polpermissive,
			(SELECT string_agg(CASE x WHEN 0 THEN 'PUBLIC' ELSE x::regrole::text END, ',' ORDER BY 1)
			   FROM unnest(p.polroles) x),
			pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
	  FROM rel r JOIN pg_policy p ON p.polrelid = r.oid
	UNION ALL
	SELECT format('relation %s view %s', r.oid::regclass,
			regexp_replace(pg_get_viewdef(r.oid), '\s+', ' ', 'g'))
	  FROM rel r WHERE r.relkind IN ('v', 'm')
	UNION ALL
	SELECT format('relation %s sequence %s type=%s start=%s increment=%s min=%s max=%s cache=%s cycle=%s',
			r.oid::regclass, s.seqrelid::regclass, s.seqtypid::regtype, s.seqstart,
			s.seqincrement, s.seqmin, s.seqmax, s.seqcache, s.seqcycle)
	  FROM rel r JOIN pg_depend d ON d.refobjid = r.oid AND d.refclassid = 'pg_class'::regclass
			AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
	  JOIN pg_sequence s ON s.seqrelid = d.objid
	UNION ALL
	SELECT format('sequence %s type=%s start=%s increment=%s min=%s max=%s cache=%s cycle=%s',
			s.seqrelid::regclass, s.seqtypid::regtype, s.seqstart, s.seqincrement,
			s.seqmin, s.seqmax, s.seqcache, s.seqcycle)
	  FROM rel r JOIN pg_sequence s ON s.seqrelid = r.oid
	UNION ALL
	-- event triggers
	SELECT format('event trigger %s event=%s function=%s enabled=%s tags=%s', e.evtname,
			e.evtevent, e.evtfoid::regprocedure, e.evtenabled, array_to_string(e.evttags, ','))
	  FROM m JOIN pg_event_trigger e ON e.oid = m.objid
	 WHERE m.classid = 'pg_event_trigger'::regclass
	UNION ALL
	-- comments
	SELECT format('comment on %s: %s', pg_describe_object(m.classid, m.objid, d.objsubid),
			regexp_replace(d.description, '\s+', ' ', 'g'))
	  FROM m JOIN pg_description d ON d.classoid = m.classid AND d.objoid = m.objid
	UNION ALL
	-- the initial privileges pg_dump compares against
	SELECT format('initial privileges %s type=%s: %s',
			pg_describe_object(ip.classoid, ip.objoid, ip.objsubid), ip.privtype,
			pg_temp.acl(ip.initprivs, 'f', 10))
	  FROM m JOIN pg_init_privs ip ON ip.classoid = m.classid AND ip.objoid = m.objid
)
SELECT line FROM lines ORDER BY line COLLATE "C";
SQL

sub snapshot
{
	my ($node, $db, $ext, $prelude) = @_;
	my $sql = "BEGIN;\n" . ($prelude // '') . "\n$snapshot_sql\nROLLBACK;\n";
	my ($rc, $out, $err) = $node->psql($db, $sql,
		extra_params => [ '-v', "ext=$ext", '-v', 'ON_ERROR_STOP=1' ]);
	die "snapshot of $ext in $db failed: $err" if $rc != 0;
	return [ split /\n/, $out ];
}

# Lines only in $a, and only in $b.
sub differences
{
	my ($a, $b) = @_;
	my (%a, %b);
	$a{$_}++ for @$a;
	$b{$_}++ for @$b;
	my @only_a = grep { !$b{$_} } sort keys %a;
	my @only_b = grep { !$a{$_} } sort keys %b;
	return (\@only_a, \@only_b);
}

sub compare_snapshots
{
	my ($label, $got, $want) = @_;
	my ($only_got, $only_want) = differences($got, $want);
	my $ok = is(scalar(@$only_got) + scalar(@$only_want), 0, $label);
	if (!$ok)
	{
		diag("only after the update:\n  " . join("\n  ", @$only_got)) if @$only_got;
		diag("only in a fresh install:\n  " . join("\n  ", @$only_want)) if @$only_want;
	}
	return $ok;
}

my $node = snowid_node('upgrade');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowid');    # for wait_for_state
ok(wait_for_state($node, 'active'), 'the node holds a lease (the user\'s table below needs ids)');

my %fresh;
foreach my $ext ('snowid', 'snowid_coordinator')
{
	my ($install, $upgrades, $default) = shipped($ext);
	my @versions = sort { version_cmp($a, $b) } keys %{ { map { $_ => 1 }
		  keys %$install, map { @$_ } @$upgrades } };
	note("$ext: versions @versions, default $default, upgrade scripts: "
		  . join(' ', map { "$_->[0]->$_->[1]" } @$upgrades));

	# The file names agree with the control file and with the server.
	ok($install->{$default}, "$ext: the default version $default has an install script");
	is($versions[-1], $default, "$ext: the default version is the newest shipped");
	my @available = sort { version_cmp($a, $b) } split /\n/, $node->safe_psql('postgres',
		"SELECT version FROM pg_available_extension_versions WHERE name = '$ext'");
	is("@available", "@versions",
		"$ext: the server offers exactly the shipped versions (the tree is installed)");
	foreach my $v (@versions)
	{
		next if $v eq $default;
		is($node->safe_psql('postgres', qq{
			SELECT path IS NOT NULL FROM pg_extension_update_paths('$ext')
			 WHERE source = '$v' AND target = '$default'}),
			't', "$ext: an update path leads from $v to $default");
	}

	# A fresh install of the default version.
	my $fresh_db = "fresh_$ext";
	$node->safe_psql('postgres', "CREATE DATABASE $fresh_db");
	$node->safe_psql($fresh_db, "CREATE EXTENSION $ext");
	$fresh{$ext} = snapshot($node, $fresh_db, $ext);
	ok(@{ $fresh{$ext} } > 20, "$ext: the fresh install has a catalog picture ("
		  . scalar(@{ $fresh{$ext} }) . ' lines, in ' . $node->basedir . "/catalog_$ext.txt)");
	open my $fh, '>', $node->basedir . "/catalog_$ext.txt" or die $!;
	print $fh map { "$_\n" } @{ $fresh{$ext} };
	close $fh;

	# Every older version (or, with none, the oldest, which is the default),
	# with data in it, updated.
	my @older = grep { version_cmp($_, $default) < 0 } @versions;
	@older = ($versions[0]) unless @older;
	foreach my $old (@older)
	{
		(my $db = "upgraded_${ext}_$old") =~ s/\W/_/g;
		$node->safe_psql('postgres', "CREATE DATABASE $db");
		$node->safe_psql($db, "CREATE EXTENSION $ext VERSION '$old'");
		is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = '$ext'"),
			$old, "$ext: installed version $old");
		if ($ext eq 'snowid')
		{
			# A user's table depending on the type, its operator classes
			# and the generator.
			$node->safe_psql($db, q{
CREATE TABLE orders (id snowid PRIMARY KEY DEFAULT snowid_nextval(), note text);
CREATE INDEX orders_hash ON orders USING hash (id);
CREATE INDEX orders_brin ON orders USING brin (id);
INSERT INTO orders (note) SELECT 'before' FROM generate_series(1, 10);
});
		}
		else
		{
			$node->safe_psql($db, q{
SELECT snowid_coordinator.initialize(single_server => true);
});
		}

		$node->safe_psql($db, "ALTER EXTENSION $ext UPDATE");
		is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = '$ext'"),
			$default, "$ext: ALTER EXTENSION UPDATE from $old reaches $default");
		compare_snapshots("$ext: $old updated to $default has the same objects as a fresh $default",
			snapshot($node, $db, $ext), $fresh{$ext});

		if ($ext eq 'snowid')
		{
			is($node->safe_psql($db, q{
INSERT INTO orders (note) SELECT 'after' FROM generate_series(1, 10);
SET enable_seqscan = off;
SELECT count(*), count(DISTINCT id) FROM orders WHERE id > 0::bigint;
}), '20|20', "$ext: the user's table keeps working after the update");
		}
		else
		{
			is($node->safe_psql($db, 'SELECT count(*) FROM snowid_coordinator.settings'),
				'1', "$ext: the coordinator's settings survive the update");
		}
	}
}

# The comparison can fail: each of these changes to a fresh install, rolled
# back afterwards, must show up as a difference.
my @tamper = (
	[ snowid => 'changed volatility', 'ALTER FUNCTION snowid_timestamp(snowid) STABLE;' ],
	[ snowid => 'changed strictness', 'ALTER FUNCTION snowid_worker(snowid) CALLED ON NULL INPUT;' ],
	[ snowid => 'changed parallel safety', 'ALTER FUNCTION snowid_region(snowid) PARALLEL RESTRICTED;' ],
	[ snowid => 'a new security definer', 'ALTER FUNCTION snowid_sequence(snowid) SECURITY DEFINER;' ],
	[ snowid => 'a new SET clause (proconfig)', 'ALTER FUNCTION snowid_decode(snowid) SET search_path = pg_catalog;' ],
	[ snowid => 'a changed function privilege', 'GRANT EXECUTE ON FUNCTION snowid_status() TO PUBLIC;' ],
	[ snowid => 'a changed view privilege', 'REVOKE SELECT ON snowid_stats FROM pg_monitor;' ],
	[ snowid => 'a new view column', 'CREATE OR REPLACE VIEW snowid_stats AS SELECT *, 1 AS extra FROM snowid_stats_internal();' ],
	[ snowid => 'a missing operator family member',
		'ALTER OPERATOR FAMILY snowid_hash_ops USING hash DROP OPERATOR 1 (snowid, int8);' ],
	[ snowid => 'a changed operator', 'ALTER OPERATOR = (snowid, int8) SET (RESTRICT = scalarltsel);' ],
	[ snowid => 'a missing cast', 'ALTER EXTENSION snowid DROP CAST (int4 AS snowid);' ],
	[ snowid => 'an extra function',
		'CREATE FUNCTION snowid_extra() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$; '
		  . 'ALTER EXTENSION snowid ADD FUNCTION snowid_extra();' ],
	[ snowid => 'a changed comment', "COMMENT ON TYPE snowid IS 'changed';" ],
	[ snowid => 'a changed type', 'ALTER TYPE snowid SET (SEND = NONE, RECEIVE = NONE);' ],
	[ snowid => 'a renamed operator class', 'ALTER OPERATOR CLASS snowid_ops USING btree RENAME TO snowid_ops2;' ],
	[ snowid => 'a missing aggregate', 'ALTER EXTENSION snowid DROP AGGREGATE max(snowid);' ],
	[ snowid_coordinator => 'a new table column', 'ALTER TABLE snowid_coordinator.leases ADD COLUMN extra int;' ],
	[ snowid_coordinator => 'a changed column default',
		"ALTER TABLE snowid_coordinator.events ALTER COLUMN event SET DEFAULT 'x';" ],
	[ snowid_coordinator => 'a missing index', 'DROP INDEX snowid_coordinator.events_at_idx;' ],
	[ snowid_coordinator => 'a changed function body',
		'CREATE OR REPLACE FUNCTION snowid_coordinator.now_ms() RETURNS bigint LANGUAGE sql STABLE '
		  . 'SET search_path = pg_catalog, pg_temp AS $$ SELECT 0::bigint $$;' ],
	[ snowid_coordinator => 'a changed schema privilege', 'REVOKE USAGE ON SCHEMA snowid_coordinator FROM pg_monitor;' ],
	[ snowid_coordinator => 'a changed table privilege', 'GRANT SELECT ON snowid_coordinator.leases TO PUBLIC;' ],
);
foreach my $t (@tamper)
{
	my ($ext, $what, $sql) = @$t;
	my $changed = snapshot($node, "fresh_$ext", $ext, $sql);
	my ($a, $b) = differences($changed, $fresh{$ext});
	ok(@$a + @$b > 0, "$ext: the comparison detects $what")
	  or diag("no difference after: $sql");
	note("  $_") for (map({ "+ $_" } @$a), map({ "- $_" } @$b));
}
# ... and the rollbacks left the fresh installs as they were.
foreach my $ext (sort keys %fresh)
{
	compare_snapshots("$ext: the fresh install is unchanged after the tampering",
		snapshot($node, "fresh_$ext", $ext), $fresh{$ext});
}

$node->stop;
done_testing();
