-- name: error_breakdown
-- answers: What kinds of errors did each provider return in the last 24 hours, and how often?
SELECT provider, error_class, count(*) AS n,
       round(count(*) / sum(count(*)) OVER (PARTITION BY provider), 4) AS share,
       any_value(http_status) AS example_status, any_value(error_code) AS example_code
FROM probes
WHERE started_at >= now() - INTERVAL 24 HOUR
GROUP BY provider, error_class
ORDER BY provider, n DESC;
