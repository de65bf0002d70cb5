-- name: cache_hits
-- answers: Did any probe hit a provider's prompt cache (which would flatter its latency)?
-- cache_hits: probes flagged cache_hit, whose cached tokens the fixed chat template ahead of
-- the nonce cannot explain (probes/sanity.py); any_cached also counts the template's own
-- few cached tokens (llama.cpp reports them on every prompt), which flatter nothing.
SELECT provider, probe, count(*) AS probes,
       count(*) FILTER (WHERE list_contains(sanity_flags, 'cache_hit')) AS cache_hits,
       count(*) FILTER (WHERE cached_tokens > 0) AS any_cached,
       max(cached_tokens) AS max_cached_tokens
FROM probes
GROUP BY ALL
HAVING count(*) FILTER (WHERE cached_tokens > 0) > 0
ORDER BY cache_hits DESC, provider, probe;
