-- name: current_phases
-- answers: What phase is each provider in according to the latest finished analysis?
WITH latest AS (
    SELECT analysis_id FROM analysis_runs WHERE status = 'done'
    ORDER BY finished_at DESC LIMIT 1
)
SELECT provider, label, stage, start_at, end_at, round(severity, 3) AS severity,
       round(confidence, 3) AS confidence, signals
FROM phases JOIN latest USING (analysis_id)
WHERE end_at IS NULL OR end_at >= now() - INTERVAL 7 DAY
ORDER BY provider, start_at;
