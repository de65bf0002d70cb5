-- The size of the prompt actually sent, in characters. With input_tokens it gives the
-- provider's characters per token for each task family, which the daemon and
-- `nerfwatch probe` read back at start so prompt sizing survives restarts.
ALTER TABLE probe_results ADD COLUMN prompt_chars INTEGER;
