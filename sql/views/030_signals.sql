-- long_context_penalty: per provider and hour, median TTFT of long-context probes divided
-- by median TTFT of short ones (successful probes only). Rises first when a provider is
-- short of memory for KV caches.
CREATE OR REPLACE VIEW long_context_penalty AS
SELECT
    provider, model, hour,
    quantile_cont(ttft_ms, 0.5) FILTER (WHERE context_class = 'long')  AS ttft_long_p50_ms,
    quantile_cont(ttft_ms, 0.5) FILTER (WHERE context_class = 'short') AS ttft_short_p50_ms,
    count(*) FILTER (WHERE context_class = 'long')                     AS n_long,
    count(*) FILTER (WHERE context_class = 'short')                    AS n_short,
    nullif(quantile_cont(ttft_ms, 0.5) FILTER (WHERE context_class = 'long'), 0)
      / nullif(quantile_cont(ttft_ms, 0.5) FILTER (WHERE context_class = 'short'), 0)
                                                                       AS penalty_ratio
FROM probes
WHERE ok
GROUP BY ALL;

-- rate_limit_headroom: per provider and hour, the share of the request and token limits
-- still available as the provider reported it (1 = untouched, 0 = exhausted), and the
-- limits themselves, so a shrinking limit is visible even when headroom looks fine.
CREATE OR REPLACE VIEW rate_limit_headroom AS
SELECT
    provider, model, hour,
    count(*) FILTER (WHERE rl_requests_limit IS NOT NULL OR rl_tokens_limit IS NOT NULL)
                                                                   AS n_reported,
    median(rl_requests_limit)                                      AS requests_limit_p50,
    min(rl_requests_remaining::DOUBLE / nullif(rl_requests_limit, 0)) AS requests_headroom_min,
    median(rl_requests_remaining::DOUBLE / nullif(rl_requests_limit, 0)) AS requests_headroom_p50,
    median(rl_tokens_limit)                                        AS tokens_limit_p50,
    min(rl_tokens_remaining::DOUBLE / nullif(rl_tokens_limit, 0))  AS tokens_headroom_min,
    median(rl_tokens_remaining::DOUBLE / nullif(rl_tokens_limit, 0)) AS tokens_headroom_p50,
    max(retry_after_s)                                             AS retry_after_max_s
FROM probes
GROUP BY ALL;
