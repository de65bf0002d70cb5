-- hourly / daily: one row per provider, model, probe, task family, context class and
-- time bucket. Latency percentiles use successful probes only; rates use all attempts.
CREATE OR REPLACE VIEW hourly AS
SELECT
    provider, model, probe, task_family, context_class, source, hour,
    count(*)                                                         AS n,
    count(*) FILTER (WHERE ok)                                       AS n_ok,
    quantile_cont(ttft_ms, 0.50) FILTER (WHERE ok)                   AS ttft_p50_ms,
    quantile_cont(ttft_ms, 0.95) FILTER (WHERE ok)                   AS ttft_p95_ms,
    quantile_cont(ttft_ms, 0.99) FILTER (WHERE ok)                   AS ttft_p99_ms,
    quantile_cont(total_ms, 0.50) FILTER (WHERE ok)                  AS total_p50_ms,
    quantile_cont(total_ms, 0.95) FILTER (WHERE ok)                  AS total_p95_ms,
    quantile_cont(total_ms, 0.99) FILTER (WHERE ok)                  AS total_p99_ms,
    quantile_cont(output_tokens_per_s, 0.50) FILTER (WHERE ok)       AS output_tps_p50,
    1 - avg(CASE WHEN ok THEN 1.0 ELSE 0.0 END)                      AS error_rate,
    avg(CASE WHEN error_class = 'rate_limited' THEN 1.0 ELSE 0.0 END) AS rate_limited_rate,
    avg(CASE WHEN error_class = 'overloaded' THEN 1.0 ELSE 0.0 END)   AS overloaded_rate,
    avg(CASE WHEN error_class IN ('timeout_connect', 'timeout_first_token', 'stall')
             THEN 1.0 ELSE 0.0 END)                                  AS timeout_rate,
    count(correct)                                                   AS n_scored,
    avg(CASE WHEN correct THEN 1.0 WHEN NOT correct THEN 0.0 END)    AS accuracy,
    avg(CASE WHEN flagged THEN 1.0 ELSE 0.0 END)                     AS sanity_flag_rate,
    sum(cost_usd)                                                    AS cost_usd
FROM probes
GROUP BY ALL;

CREATE OR REPLACE VIEW daily AS
SELECT
    provider, model, probe, task_family, context_class, source, day,
    count(*)                                                         AS n,
    count(*) FILTER (WHERE ok)                                       AS n_ok,
    quantile_cont(ttft_ms, 0.50) FILTER (WHERE ok)                   AS ttft_p50_ms,
    quantile_cont(ttft_ms, 0.95) FILTER (WHERE ok)                   AS ttft_p95_ms,
    quantile_cont(ttft_ms, 0.99) FILTER (WHERE ok)                   AS ttft_p99_ms,
    quantile_cont(total_ms, 0.50) FILTER (WHERE ok)                  AS total_p50_ms,
    quantile_cont(total_ms, 0.95) FILTER (WHERE ok)                  AS total_p95_ms,
    quantile_cont(total_ms, 0.99) FILTER (WHERE ok)                  AS total_p99_ms,
    quantile_cont(output_tokens_per_s, 0.50) FILTER (WHERE ok)       AS output_tps_p50,
    1 - avg(CASE WHEN ok THEN 1.0 ELSE 0.0 END)                      AS error_rate,
    avg(CASE WHEN error_class = 'rate_limited' THEN 1.0 ELSE 0.0 END) AS rate_limited_rate,
    avg(CASE WHEN error_class = 'overloaded' THEN 1.0 ELSE 0.0 END)   AS overloaded_rate,
    avg(CASE WHEN error_class IN ('timeout_connect', 'timeout_first_token', 'stall')
             THEN 1.0 ELSE 0.0 END)                                  AS timeout_rate,
    count(correct)                                                   AS n_scored,
    avg(CASE WHEN correct THEN 1.0 WHEN NOT correct THEN 0.0 END)    AS accuracy,
    avg(CASE WHEN flagged THEN 1.0 ELSE 0.0 END)                     AS sanity_flag_rate,
    sum(cost_usd)                                                    AS cost_usd
FROM probes
GROUP BY ALL;

-- errors_hourly: error rate by class, long format (one row per class present).
CREATE OR REPLACE VIEW errors_hourly AS
SELECT
    p.provider, p.model, p.hour, p.error_class,
    count(*) AS n,
    count(*) / any_value(t.n_total) AS rate
FROM probes p
JOIN (SELECT provider, model, hour, count(*) AS n_total FROM probes GROUP BY ALL) t
  USING (provider, model, hour)
GROUP BY ALL;
