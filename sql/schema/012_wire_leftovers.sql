-- Wire fields the probe client read into response_headers only, or not at all
-- (/work/shared/providers.md §4, §11). NULL: not sent, or sent as a "not reported" marker.

-- OpenRouter's chunk `provider`: the upstream that served the request. With routing
-- fallbacks a different upstream under the same model name is a different model served.
ALTER TABLE probe_results ADD COLUMN upstream_provider VARCHAR;

-- Prompt tokens written to a prompt cache (Anthropic `cache_creation_input_tokens`,
-- OpenRouter `prompt_tokens_details.cache_write_tokens`); part of input_tokens, and priced
-- at price_cache_write_per_mtok in cost_usd (default 1.25 x the input price).
ALTER TABLE probe_results ADD COLUMN cache_write_tokens INTEGER;

-- Anthropic's output-token limit (anthropic-ratelimit-output-tokens-*); reset in seconds.
ALTER TABLE probe_results ADD COLUMN rl_output_tokens_limit BIGINT;
ALTER TABLE probe_results ADD COLUMN rl_output_tokens_remaining BIGINT;
ALTER TABLE probe_results ADD COLUMN rl_output_tokens_reset_s DOUBLE;

-- Anthropic's subscription (OAuth) limits, anthropic-ratelimit-unified-*: status (allowed,
-- allowed_warning, rejected), the window it speaks for (five_hour, seven_day), its reset,
-- and each window's utilization (fraction of the window used, 0-1) and reset in seconds.
ALTER TABLE probe_results ADD COLUMN rl_unified_status VARCHAR;
ALTER TABLE probe_results ADD COLUMN rl_unified_claim VARCHAR;
ALTER TABLE probe_results ADD COLUMN rl_unified_reset_s DOUBLE;
ALTER TABLE probe_results ADD COLUMN rl_unified_5h_utilization DOUBLE;
ALTER TABLE probe_results ADD COLUMN rl_unified_5h_reset_s DOUBLE;
ALTER TABLE probe_results ADD COLUMN rl_unified_7d_utilization DOUBLE;
ALTER TABLE probe_results ADD COLUMN rl_unified_7d_reset_s DOUBLE;
