-- name: provider_comparison
-- answers: How do the providers compare over the last 7 days (availability, TTFT, speed, accuracy, cost)?
SELECT
    provider,
    count(*)                                               AS probes,
    round(avg(CASE WHEN ok THEN 1.0 ELSE 0.0 END), 4)      AS availability,
    round(quantile_cont(ttft_ms, 0.5) FILTER (WHERE ok))   AS ttft_p50_ms,
    round(quantile_cont(ttft_ms, 0.95) FILTER (WHERE ok))  AS ttft_p95_ms,
    round(median(output_tokens_per_s) FILTER (WHERE ok), 1) AS output_tps_p50,
    round(avg(CASE WHEN correct THEN 1.0 WHEN NOT correct THEN 0.0 END), 3) AS accuracy,
    round(avg(cost_usd), 6)                                AS cost_per_probe_usd
FROM probes
WHERE started_at >= now() - INTERVAL 7 DAY
GROUP BY provider
ORDER BY provider;
