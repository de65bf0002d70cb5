-- Anthropic's input-token limit (anthropic-ratelimit-input-tokens-*; reset in seconds), a
-- limit of its own beside the output-token one (012). Where Anthropic also sends the
-- combined anthropic-ratelimit-tokens-* family, rl_tokens_* holds that one, and the input
-- limit was kept in response_headers only (/work/shared/providers.md §4). NULL: not sent,
-- or sent as a "not reported" marker.
ALTER TABLE probe_results ADD COLUMN rl_input_tokens_limit BIGINT;
ALTER TABLE probe_results ADD COLUMN rl_input_tokens_remaining BIGINT;
ALTER TABLE probe_results ADD COLUMN rl_input_tokens_reset_s DOUBLE;
