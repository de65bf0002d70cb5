-- name: skipped_runs
-- answers: Which scheduled runs did not happen or were cut short, and why (budget, overrun, shutdown)?
SELECT provider, probe, run_status, skip_reason, count(*) AS n,
       min(started_at) AS first_at, max(started_at) AS last_at
FROM probe_results
WHERE run_status <> 'done'
GROUP BY ALL
ORDER BY n DESC;
