-- name: upstream_mix
-- answers: Which upstreams served each routed model (OpenRouter) day by day, and how fast and accurate was each?
-- share: of the day's probes that named an upstream (a probe that failed before its first
-- chunk names none); TTFT per context class, so a different context mix does not pass for speed.
SELECT provider, model, day, upstream_provider, count(*) AS probes,
       round(count(*) / sum(count(*)) OVER (PARTITION BY provider, model, day), 3) AS share,
       round(quantile_cont(ttft_ms, 0.5) FILTER (WHERE ok AND context_class = 'short'))
                                                                         AS ttft_short_p50_ms,
       round(quantile_cont(ttft_ms, 0.5) FILTER (WHERE ok AND context_class = 'long'))
                                                                         AS ttft_long_p50_ms,
       count(correct) AS n_scored,
       round(avg(CASE WHEN correct THEN 1.0 WHEN NOT correct THEN 0.0 END), 3) AS accuracy
FROM probes
WHERE upstream_provider IS NOT NULL
GROUP BY provider, model, day, upstream_provider
ORDER BY provider, model, day, probes DESC, upstream_provider;
