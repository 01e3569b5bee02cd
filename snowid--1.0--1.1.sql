/* snowid--1.0--1.1.sql: update from 1.0 to 1.1 */

\echo Use "ALTER EXTENSION snowid UPDATE TO '1.1'" to load this file. \quit

--
-- snowid_convert_column(): adopting snowid on an existing table (issue 13).
--
-- Switches a bigint key (bigserial, GENERATED ... AS IDENTITY or plain
-- bigint) to DEFAULT snowid_nextval() in the caller's transaction: drops
-- the identity, or the sequence the column owns, keeps every row and
-- foreign key, and with as_snowid changes the column and the bigint
-- columns whose foreign keys reference it to type snowid (which rewrites
-- those tables).  It refuses a column holding a value at or above
-- snowid_from_time(now()), which new ids could equal.
--
-- SECURITY INVOKER: the caller must own the tables, as ALTER TABLE
-- requires.  The locks it takes are explained in its body.
--
CREATE FUNCTION @extschema@.snowid_convert_column(tbl pg_catalog.regclass,
	col pg_catalog.name, as_snowid pg_catalog.bool DEFAULT false)
RETURNS void
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $convert$
DECLARE
	int8_type	pg_catalog.oid := 'pg_catalog.int8'::pg_catalog.regtype;
	snowid_type pg_catalog.oid := '@extschema@.snowid'::pg_catalog.regtype;
	rel			record;
	att			record;
	r			record;
	ref_tables	pg_catalog.oid[];
	waiting_for_table pg_catalog.bool;
	def_oid		pg_catalog.oid;
	max_value	pg_catalog.int8;
	min_value	pg_catalog.int8;
	first_id	pg_catalog.int8;
BEGIN
	SELECT c.oid, c.relkind, c.relowner INTO rel
	  FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) tbl;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = '42P01',
			MESSAGE = pg_catalog.format('relation with OID %s does not exist', tbl::pg_catalog.oid);
	END IF;
	IF rel.relkind NOT IN ('r', 'p') THEN
		RAISE EXCEPTION USING ERRCODE = '42809',
			MESSAGE = pg_catalog.format('"%s" is not a table', tbl),
			DETAIL = 'snowid_convert_column() converts a column of a table or a partitioned table.';
	END IF;
	IF NOT pg_catalog.pg_has_role(rel.relowner, 'USAGE') THEN
		RAISE EXCEPTION USING ERRCODE = '42501',
			MESSAGE = pg_catalog.format('must be owner of table %s', tbl);
	END IF;

	-- Locks.  ACCESS EXCLUSIVE on the table, then (as_snowid) on the
	-- tables whose foreign keys reference the column, which change type
	-- too.  Sessions take these in either order: an INSERT into the table
	-- and then a referencing one locks the table first, an INSERT into a
	-- referencing table alone locks it and then, for its foreign key
	-- check, the table.  Waiting for the table and then for a referencing
	-- table would deadlock with the second kind, so the referencing tables
	-- are taken with NOWAIT: if one is busy, every lock of this attempt is
	-- let go (a subtransaction), the session holding it finishes, and the
	-- attempt is repeated; after 20 attempts (about 4 s), the locks are
	-- waited for.  A lock_timeout the caller set applies to each wait.
	IF as_snowid THEN
		ref_tables := ARRAY(
			SELECT DISTINCT k.conrelid
			  FROM pg_catalog.pg_constraint k
			  JOIN pg_catalog.pg_attribute a
				ON a.attrelid OPERATOR(pg_catalog.=) k.confrelid
			   AND a.attnum OPERATOR(pg_catalog.=) ANY (k.confkey)
			 WHERE k.contype OPERATOR(pg_catalog.=) 'f'
			   AND k.confrelid OPERATOR(pg_catalog.=) tbl
			   AND k.conparentid OPERATOR(pg_catalog.=) 0
			   AND a.attname OPERATOR(pg_catalog.=) col
			   AND k.conrelid OPERATOR(pg_catalog.<>) tbl
			 ORDER BY k.conrelid);
		FOR r IN SELECT c.oid::pg_catalog.regclass AS t, c.relowner
				   FROM pg_catalog.pg_class c
				  WHERE c.oid OPERATOR(pg_catalog.=) ANY (ref_tables)
				  ORDER BY c.oid LOOP
			IF NOT pg_catalog.pg_has_role(r.relowner, 'USAGE') THEN
				RAISE EXCEPTION USING ERRCODE = '42501',
					MESSAGE = pg_catalog.format('must be owner of table %s', r.t),
					DETAIL = pg_catalog.format('With as_snowid, the columns of %s that reference "%s" of %s change type too.',
											   r.t, col, tbl);
			END IF;
		END LOOP;
	ELSE
		ref_tables := '{}';
	END IF;
	FOR attempt IN 1..21 LOOP
		BEGIN
			waiting_for_table := true;
			EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
			waiting_for_table := false;
			FOR r IN SELECT u.t::pg_catalog.regclass AS t
					   FROM pg_catalog.unnest(ref_tables) AS u(t) LOOP
				EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE%s', r.t,
										  CASE WHEN attempt OPERATOR(pg_catalog.<) 21
										  THEN ' NOWAIT' ELSE '' END);
			END LOOP;
			EXIT;
		EXCEPTION WHEN lock_not_available THEN
			IF waiting_for_table OR attempt OPERATOR(pg_catalog.=) 21 THEN
				RAISE;
			END IF;
		END;
		PERFORM pg_catalog.pg_sleep(0.02 * attempt);
	END LOOP;
	-- A foreign key created meanwhile waited for the table's lock; its
	-- table is locked now, after the table.
	IF as_snowid THEN
		FOR r IN
			SELECT DISTINCT k.conrelid::pg_catalog.regclass AS t
			  FROM pg_catalog.pg_constraint k
			 WHERE k.contype OPERATOR(pg_catalog.=) 'f'
			   AND k.confrelid OPERATOR(pg_catalog.=) tbl
			   AND k.conparentid OPERATOR(pg_catalog.=) 0
			   AND k.conrelid OPERATOR(pg_catalog.<>) tbl
			   AND NOT k.conrelid OPERATOR(pg_catalog.=) ANY (ref_tables)
		LOOP
			EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', r.t);
		END LOOP;
	END IF;

	SELECT a.attnum, a.atttypid, a.attidentity, a.attgenerated INTO att
	  FROM pg_catalog.pg_attribute a
	 WHERE a.attrelid OPERATOR(pg_catalog.=) tbl
	   AND a.attname OPERATOR(pg_catalog.=) col
	   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = '42703',
			MESSAGE = pg_catalog.format('column "%s" of relation "%s" does not exist', col, tbl);
	END IF;
	IF att.atttypid NOT IN (int8_type, snowid_type) THEN
		RAISE EXCEPTION USING ERRCODE = '42804',
			MESSAGE = pg_catalog.format('column "%s" of relation "%s" is of type %s',
										col, tbl, pg_catalog.format_type(att.atttypid, NULL)),
			DETAIL = 'snowid_convert_column() converts bigint (bigserial, identity) and snowid columns only: a snowid needs all 64 bits.',
			HINT = CASE WHEN att.atttypid IN ('pg_catalog.int2'::pg_catalog.regtype::pg_catalog.oid,
											  'pg_catalog.int4'::pg_catalog.regtype::pg_catalog.oid)
				THEN pg_catalog.format('Change the column and the columns referencing it to bigint first (ALTER TABLE %s ALTER COLUMN %I TYPE bigint rewrites the table).', tbl, col)
				ELSE 'Add a new column of type snowid with DEFAULT snowid_nextval() instead.' END;
	END IF;
	IF att.attgenerated OPERATOR(pg_catalog.<>) '' THEN
		RAISE EXCEPTION USING ERRCODE = '55000',
			MESSAGE = pg_catalog.format('column "%s" of relation "%s" is a generated column', col, tbl),
			DETAIL = 'A generated column computes its value and can have no default.';
	END IF;

	-- Every existing value must lie below the ids snowid makes from now
	-- on.  max() and min() come from the column's btree index if it has
	-- one, without a scan of the table.
	EXECUTE pg_catalog.format(
		'SELECT pg_catalog.max(%1$I)::pg_catalog.int8, pg_catalog.min(%1$I)::pg_catalog.int8 FROM %2$s',
		col, tbl) INTO max_value, min_value;
	first_id := @extschema@.snowid_from_time(pg_catalog.now())::pg_catalog.int8;
	IF max_value OPERATOR(pg_catalog.>=) first_id THEN
		RAISE EXCEPTION USING ERRCODE = '22003',
			MESSAGE = pg_catalog.format('column "%s" of relation "%s" holds %s, not below the ids snowid makes now',
										col, tbl, max_value),
			DETAIL = pg_catalog.format('snowid_nextval() makes ids from %s (snowid_from_time(now())) on, so new ids could equal existing ones.',
									   first_id),
			HINT = 'Give the rows above that bound smaller ids first (foreign keys declared ON UPDATE CASCADE follow), or keep the column''s sequence.';
	END IF;
	IF as_snowid AND min_value OPERATOR(pg_catalog.<) 0 THEN
		RAISE EXCEPTION USING ERRCODE = '22003',
			MESSAGE = pg_catalog.format('column "%s" of relation "%s" holds negative values, which type snowid cannot hold',
										col, tbl),
			DETAIL = pg_catalog.format('Its smallest value is %s.', min_value),
			HINT = 'Convert it with as_snowid => false: the column stays bigint.';
	END IF;

	-- With as_snowid, every column whose foreign key references this one
	-- follows it to type snowid: it must be bigint (or snowid already),
	-- and no view may read it (PostgreSQL cannot change its type then).
	IF as_snowid THEN
		FOR r IN
			SELECT k.conrelid::pg_catalog.regclass AS reltbl, a.attname,
				   a.atttypid, k.conname
			  FROM pg_catalog.pg_constraint k
			 CROSS JOIN LATERAL pg_catalog.generate_subscripts(k.confkey, 1) AS s(i)
			  JOIN pg_catalog.pg_attribute a
				ON a.attrelid OPERATOR(pg_catalog.=) k.conrelid
			   AND a.attnum OPERATOR(pg_catalog.=) k.conkey[i]
			 WHERE k.contype OPERATOR(pg_catalog.=) 'f'
			   AND k.confrelid OPERATOR(pg_catalog.=) tbl
			   AND k.conparentid OPERATOR(pg_catalog.=) 0
			   AND k.confkey[i] OPERATOR(pg_catalog.=) att.attnum
			   AND a.atttypid NOT IN (int8_type, snowid_type)
		LOOP
			RAISE EXCEPTION USING ERRCODE = '42804',
				MESSAGE = pg_catalog.format('column "%s" of relation "%s" references "%s" of "%s" but is of type %s',
											r.attname, r.reltbl, col, tbl,
											pg_catalog.format_type(r.atttypid, NULL)),
				DETAIL = pg_catalog.format('With as_snowid, the columns of foreign keys referencing the column change to type snowid too, and foreign key %I cannot.',
										   r.conname),
				HINT = 'Convert it with as_snowid => false (the columns stay bigint), or change that column to bigint first.';
		END LOOP;
		FOR r IN
			SELECT DISTINCT v.ev_class::pg_catalog.regclass AS viewname,
				   d.refobjid::pg_catalog.regclass AS reltbl, a.attname
			  FROM pg_catalog.pg_depend d
			  JOIN pg_catalog.pg_rewrite v ON v.oid OPERATOR(pg_catalog.=) d.objid
			  JOIN pg_catalog.pg_attribute a
				ON a.attrelid OPERATOR(pg_catalog.=) d.refobjid
			   AND a.attnum OPERATOR(pg_catalog.=) d.refobjsubid
			 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
			   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
			   AND v.ev_class OPERATOR(pg_catalog.<>) d.refobjid
			   AND a.atttypid OPERATOR(pg_catalog.=) int8_type
			   AND ((d.refobjid OPERATOR(pg_catalog.=) tbl
					 AND d.refobjsubid OPERATOR(pg_catalog.=) att.attnum)
					OR (d.refobjid, d.refobjsubid) IN (
						SELECT k.conrelid, k.conkey[i]
						  FROM pg_catalog.pg_constraint k
						 CROSS JOIN LATERAL pg_catalog.generate_subscripts(k.confkey, 1) AS s(i)
						 WHERE k.contype OPERATOR(pg_catalog.=) 'f'
						   AND k.confrelid OPERATOR(pg_catalog.=) tbl
						   AND k.conparentid OPERATOR(pg_catalog.=) 0
						   AND k.confkey[i] OPERATOR(pg_catalog.=) att.attnum))
			 ORDER BY 1, 2, 3
			 LIMIT 1
		LOOP
			RAISE EXCEPTION USING ERRCODE = '0A000',
				MESSAGE = pg_catalog.format('cannot change column "%s" of relation "%s" to type snowid: view %s uses it',
											r.attname, r.reltbl, r.viewname),
				HINT = 'Convert it with as_snowid => false (the columns stay bigint), or drop the view and create it again after the conversion.';
		END LOOP;
	END IF;

	-- The old generator goes: an identity with its sequence, or a default
	-- and the sequence the column owns (bigserial).
	IF att.attidentity OPERATOR(pg_catalog.<>) '' THEN
		EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
	ELSE
		SELECT d.oid INTO def_oid
		  FROM pg_catalog.pg_attrdef d
		 WHERE d.adrelid OPERATOR(pg_catalog.=) tbl
		   AND d.adnum OPERATOR(pg_catalog.=) att.attnum;
		-- Sequences the default uses that the column does not own stay,
		-- for whoever else uses them.
		FOR r IN
			SELECT p.refobjid::pg_catalog.regclass AS seq
			  FROM pg_catalog.pg_depend p
			  JOIN pg_catalog.pg_class s ON s.oid OPERATOR(pg_catalog.=) p.refobjid
			 WHERE p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
			   AND p.objid OPERATOR(pg_catalog.=) def_oid
			   AND p.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
			   AND s.relkind OPERATOR(pg_catalog.=) 'S'
			   AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend o
								WHERE o.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
								  AND o.objid OPERATOR(pg_catalog.=) p.refobjid
								  AND o.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
								  AND o.refobjid OPERATOR(pg_catalog.=) tbl
								  AND o.refobjsubid OPERATOR(pg_catalog.=) att.attnum
								  AND o.deptype OPERATOR(pg_catalog.=) 'a')
			 ORDER BY 1
		LOOP
			RAISE NOTICE 'sequence % is kept: column "%" of relation "%" does not own it',
				r.seq, col, tbl;
		END LOOP;
		IF def_oid IS NOT NULL THEN
			-- Set again below, also when it is snowid_nextval() already (a
			-- type change would otherwise wrap it in casts).
			EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
		END IF;
		-- The sequences the column owns (bigserial's) go, unless another
		-- default or a view uses them too: those lose their owner only.
		FOR r IN
			SELECT o.objid::pg_catalog.regclass AS seq
			  FROM pg_catalog.pg_depend o
			  JOIN pg_catalog.pg_class s ON s.oid OPERATOR(pg_catalog.=) o.objid
			 WHERE o.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
			   AND o.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
			   AND o.refobjid OPERATOR(pg_catalog.=) tbl
			   AND o.refobjsubid OPERATOR(pg_catalog.=) att.attnum
			   AND o.deptype OPERATOR(pg_catalog.=) 'a'
			   AND s.relkind OPERATOR(pg_catalog.=) 'S'
			 ORDER BY 1
		LOOP
			IF EXISTS (SELECT FROM pg_catalog.pg_depend u
						WHERE u.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
						  AND u.refobjid OPERATOR(pg_catalog.=) r.seq::pg_catalog.oid
						  AND u.deptype OPERATOR(pg_catalog.=) 'n') THEN
				EXECUTE pg_catalog.format('ALTER SEQUENCE %s OWNED BY NONE', r.seq);
				RAISE NOTICE 'sequence % is kept: other objects use it', r.seq;
			ELSE
				EXECUTE pg_catalog.format('DROP SEQUENCE %s', r.seq);
			END IF;
		END LOOP;
	END IF;

	IF as_snowid AND att.atttypid OPERATOR(pg_catalog.<>) snowid_type THEN
		EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I TYPE @extschema@.snowid', tbl, col);
		FOR r IN
			SELECT DISTINCT k.conrelid::pg_catalog.regclass AS reltbl, a.attname
			  FROM pg_catalog.pg_constraint k
			 CROSS JOIN LATERAL pg_catalog.generate_subscripts(k.confkey, 1) AS s(i)
			  JOIN pg_catalog.pg_attribute a
				ON a.attrelid OPERATOR(pg_catalog.=) k.conrelid
			   AND a.attnum OPERATOR(pg_catalog.=) k.conkey[i]
			 WHERE k.contype OPERATOR(pg_catalog.=) 'f'
			   AND k.confrelid OPERATOR(pg_catalog.=) tbl
			   AND k.conparentid OPERATOR(pg_catalog.=) 0
			   AND k.confkey[i] OPERATOR(pg_catalog.=) att.attnum
			   AND a.atttypid OPERATOR(pg_catalog.=) int8_type
			 ORDER BY 1, 2
		LOOP
			EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I TYPE @extschema@.snowid',
									  r.reltbl, r.attname);
		END LOOP;
	END IF;

	EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT @extschema@.snowid_nextval()',
							  tbl, col);
END
$convert$;

COMMENT ON FUNCTION @extschema@.snowid_convert_column(pg_catalog.regclass, pg_catalog.name, pg_catalog.bool) IS
	'switch a bigint, bigserial or identity column to DEFAULT snowid_nextval(), optionally to type snowid';
