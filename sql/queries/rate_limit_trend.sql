-- name: rate_limit_trend
-- answers: Are the providers' reported rate limits shrinking, day by day?
SELECT provider, timezone('UTC', date_trunc('day', timezone('UTC', hour))) AS day,
       median(requests_limit_p50) AS requests_limit, median(tokens_limit_p50) AS tokens_limit,
       round(min(requests_headroom_min), 3) AS requests_headroom_min,
       round(min(tokens_headroom_min), 3) AS tokens_headroom_min
FROM rate_limit_headroom
WHERE n_reported > 0
GROUP BY ALL
ORDER BY provider, day;
