CREATE EXTENSION snowid;
SELECT '42'::snowid;
