--
-- Soft input errors (PostgreSQL 16 on): snowid_in reports through the
-- caller's ErrorSaveContext, so pg_input_is_valid() and
-- pg_input_error_info() answer without raising.  The Makefile runs this
-- file on 16 and later only.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;

SELECT input, pg_input_is_valid(input, 'snowid') AS valid
FROM (VALUES ('12'), (' 12 '), ('0'), ('9223372036854775807'), ('12x'), (''),
			 ('-1'), ('9223372036854775808'), ('1e3')) AS v(input);

SELECT input, e.*
FROM (VALUES ('12x'), ('9223372036854775808'), ('-1'), ('12')) AS v(input),
	LATERAL pg_input_error_info(input, 'snowid') AS e;

-- Array input passes the context on to each element.
SELECT pg_input_is_valid('{1,2,3}', 'snowid[]') AS ok,
	pg_input_is_valid('{1,2x,3}', 'snowid[]') AS bad_element;
SELECT * FROM pg_input_error_info('{1,2x,3}', 'snowid[]');

-- A domain over snowid: the type's soft error, then the domain's check.
CREATE DOMAIN pg_temp.small_snowid AS snowid CHECK (VALUE < 100);
SELECT pg_input_is_valid('12', 'pg_temp.small_snowid') AS ok,
	pg_input_is_valid('12x', 'pg_temp.small_snowid') AS syntax,
	pg_input_is_valid('1000', 'pg_temp.small_snowid') AS check_fails;

-- Outside a soft context the same input still raises the error.
SELECT '12x'::snowid;
