-- name: long_context_penalty_daily
-- answers: Is long context getting slower relative to short context, day by day?
SELECT provider, timezone('UTC', date_trunc('day', timezone('UTC', hour))) AS day,
       round(median(penalty_ratio), 2) AS penalty_ratio_p50,
       sum(n_long) AS n_long, sum(n_short) AS n_short
FROM long_context_penalty
WHERE penalty_ratio IS NOT NULL
GROUP BY ALL
ORDER BY provider, day;
