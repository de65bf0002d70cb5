-- probes: every attempted probe (skipped and aborted runs left out) with handy derived
-- columns. Everything else builds on this view.
CREATE OR REPLACE VIEW probes AS
SELECT
    *,
    date_trunc('hour', started_at) AS hour,
    date_trunc('day', started_at)  AS day,
    error_class = 'ok'             AS ok,
    CASE WHEN score_strict IS NULL THEN NULL ELSE score_strict = 'correct' END AS correct,
    -- answer flags only (probes.sanity.ANSWER_FLAGS); metadata flags stay in sanity_flags
    coalesce(list_has_any(sanity_flags, ['empty', 'truncated', 'context_full', 'wrong_script',
        'invalid_unicode', 'repetition', 'refusal']), false) AS flagged
FROM probe_results
WHERE run_status = 'done';
