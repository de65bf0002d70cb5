-- name: daily_spend
-- answers: How many tokens and dollars did probing cost per provider per day?
SELECT provider, day, count(*) AS probes,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       round(sum(cost_usd), 4) AS cost_usd
FROM probes
GROUP BY ALL
ORDER BY day DESC, provider;
