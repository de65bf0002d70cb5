-- name: upcoming_release_windows
-- answers: When might each provider ship its next model, according to the latest analysis?
WITH latest AS (
    SELECT analysis_id FROM analysis_runs WHERE status = 'done'
    ORDER BY finished_at DESC LIMIT 1
)
SELECT provider, vendor, expected_date, window_lo, window_hi, conclusive, basis
FROM release_forecasts JOIN latest USING (analysis_id)
ORDER BY expected_date NULLS LAST;
