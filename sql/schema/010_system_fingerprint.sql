-- The serving-stack identifier some OpenAI-compatible APIs send with every response
-- (`system_fingerprint`). A new value under an unchanged model name is one sign of a
-- changed model or serving stack (see pipeline/analysis/metadata_fingerprint.py).
ALTER TABLE probe_results ADD COLUMN system_fingerprint VARCHAR;
