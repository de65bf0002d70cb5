-- name: cache_hits
-- answers: Did any probe hit a provider's prompt cache (which would flatter its latency)?
SELECT provider, probe, count(*) AS probes, count(*) FILTER (WHERE cached_tokens > 0) AS cache_hits,
       max(cached_tokens) AS max_cached_tokens
FROM probes
GROUP BY ALL
HAVING count(*) FILTER (WHERE cached_tokens > 0) > 0
ORDER BY cache_hits DESC;
