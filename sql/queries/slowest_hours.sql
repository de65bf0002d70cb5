-- name: slowest_hours
-- answers: Which hours of the last 7 days had the slowest time to first token, per provider?
-- Each row pools every probe of one provider and context class in one UTC hour (the hourly
-- view splits them by probe and source, so one answer could rank on its own). Hours with
-- fewer than 3 answers are left out; ttft_p95_ms is shown only from 20 answers, since a
-- 95th percentile of fewer is little more than their maximum.
SELECT provider, context_class, hour,
       count(*) FILTER (WHERE ok) AS answers,
       round(median(ttft_ms) FILTER (WHERE ok)) AS ttft_p50_ms,
       CASE WHEN count(*) FILTER (WHERE ok) >= 20
            THEN round(quantile_cont(ttft_ms, 0.95) FILTER (WHERE ok)) END AS ttft_p95_ms
FROM probes
WHERE hour >= now() - INTERVAL 7 DAY
GROUP BY provider, context_class, hour
HAVING count(*) FILTER (WHERE ok) >= 3
QUALIFY row_number() OVER (PARTITION BY provider ORDER BY ttft_p50_ms DESC, hour) <= 10
ORDER BY provider, ttft_p50_ms DESC, hour;
