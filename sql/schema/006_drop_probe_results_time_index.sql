-- The (provider, started_at) index of 001 served no query: DuckDB uses an index for
-- point lookups only and prunes time ranges by zone maps. It was kept up to date by every
-- flush and grew with the history. The primary key on run_id stays.
DROP INDEX IF EXISTS probe_results_provider_time;
