-- name: slowest_hours
-- answers: Which hours of the last 7 days had the slowest time to first token, per provider?
SELECT provider, context_class, hour, n, round(ttft_p50_ms) AS ttft_p50_ms,
       round(ttft_p95_ms) AS ttft_p95_ms
FROM hourly
WHERE hour >= now() - INTERVAL 7 DAY AND n_ok > 0
QUALIFY row_number() OVER (PARTITION BY provider ORDER BY ttft_p95_ms DESC) <= 10
ORDER BY provider, ttft_p95_ms DESC;
