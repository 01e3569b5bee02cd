--
-- snowid_coordinator.initialize() and serve_regions(): every bad value
-- refused with 22023 and a detail, nothing recorded; then the good ones.
--
CREATE EXTENSION snowid_coordinator;
\set VERBOSITY default
\set SHOW_CONTEXT never

-- layouts
SELECT snowid_coordinator.initialize(worker_bits => 0);
SELECT snowid_coordinator.initialize(worker_bits => 21);
SELECT snowid_coordinator.initialize(worker_bits => 16, sequence_bits => 12);
SELECT snowid_coordinator.initialize(region_bits => 11);
SELECT snowid_coordinator.initialize(epoch => now() + interval '1 day');
SELECT snowid_coordinator.initialize(lease_time => '2 seconds');
SELECT snowid_coordinator.initialize(safety_period => '-1 second');

-- regions
SELECT snowid_coordinator.initialize(regions => ARRAY[0]);
SELECT snowid_coordinator.initialize(region_bits => 2, regions => ARRAY[4]);
SELECT snowid_coordinator.initialize(region_bits => 2, regions => ARRAY[-1]);
SELECT snowid_coordinator.initialize(region_bits => 2, regions => ARRAY[1, NULL]);
SELECT snowid_coordinator.initialize(region_bits => 2, regions => '{}');
SELECT count(*) AS settings_rows FROM snowid_coordinator.settings;

SELECT snowid_coordinator.serve_regions(ARRAY[1]);	-- not initialized

SELECT snowid_coordinator.initialize(region_bits => 2, regions => ARRAY[3, 1, 1],
									 single_server => true);
SELECT regions FROM snowid_coordinator.settings;
SELECT snowid_coordinator.initialize();		-- twice
SELECT snowid_coordinator.serve_regions(ARRAY[2, 4]);
SELECT snowid_coordinator.serve_regions('{}');
SELECT regions FROM snowid_coordinator.settings;
SELECT snowid_coordinator.serve_regions(ARRAY[2, 0]);
SELECT region, served FROM snowid_coordinator.worker_pool ORDER BY region;
SELECT snowid_coordinator.serve_regions(NULL);
SELECT regions IS NULL AS every_region FROM snowid_coordinator.settings;

DROP EXTENSION snowid_coordinator;
