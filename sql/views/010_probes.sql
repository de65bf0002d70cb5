-- probes: every attempted probe (skipped and aborted runs left out) with handy derived
-- columns. Everything else builds on this view.
CREATE OR REPLACE VIEW probes AS
SELECT
    *,
    -- UTC hours and days whatever the session's TimeZone (the plain duckdb CLI uses the
    -- machine's zone; in Kathmandu, +5:45, its hours began at :15), as the report counts them
    timezone('UTC', date_trunc('hour', timezone('UTC', started_at))) AS hour,
    timezone('UTC', date_trunc('day', timezone('UTC', started_at)))  AS day,
    error_class = 'ok'             AS ok,
    CASE WHEN score_strict IS NULL THEN NULL ELSE score_strict = 'correct' END AS correct,
    -- answer flags only (probes.sanity.ANSWER_FLAGS); metadata flags stay in sanity_flags
    coalesce(list_has_any(sanity_flags, ['empty', 'truncated', 'context_full', 'wrong_script',
        'invalid_unicode', 'repetition', 'refusal']), false) AS flagged
FROM probe_results
WHERE run_status = 'done';
