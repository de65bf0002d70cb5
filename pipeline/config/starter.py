"""The commented starter ``nerfwatch.toml`` that ``nerfwatch init`` writes.

Only the bundled simulator is active, so the file validates on a machine without API
keys; each real provider is a commented preset to uncomment. Prices are examples: check
your provider's price page, they change often.
"""

from __future__ import annotations

__all__ = ["STARTER_CONFIG"]

STARTER_CONFIG = """\
# nerfwatch configuration. Validate it with:  nerfwatch config check
# Secrets never go in this file: each provider names the environment variable that
# holds its API key (api_key_env), and webhooks name the variable holding their URL.

[warehouse]
path = "nerfwatch-data/nerfwatch.duckdb"   # relative paths start at this file's folder
spool_dir = "nerfwatch-data/spool"         # results wait here (fsync'd) until DuckDB is free
# probe_site = "home-laptop"               # label stored with every row

# ---------------------------------------------------------------------------------------
# Providers. One [[providers]] table per endpoint + model you want to watch.
#   format      "openai" (Chat Completions) or "anthropic" (Messages)
#   preset      wire quirks of that provider (defaults to the format)
#   prices      USD per million tokens: input, output, cached input (cache reads; unset:
#               the input price) and price_cache_write_per_mtok (prompt-cache writes;
#               unset: 1.25 x the input price, Anthropic's 5-minute rate)
#   max_context the model's context window in tokens (probes above it are refused)
# ---------------------------------------------------------------------------------------

# The bundled simulator plays three fictional providers (nova, sable, kestrel); start it
# with  nerfwatch simulate serve --port 8765  and remove this entry once real ones are in.
[[providers]]
name = "nova"
vendor = "Nova Labs"
format = "openai"
preset = "simulator"
base_url = "http://127.0.0.1:8765/nova/v1"
model = "nova-chat"
plan = "simulated"
max_context = 200000
price_input_per_mtok = 1.0
price_output_per_mtok = 4.0

# [[providers]]
# name = "openai"
# vendor = "OpenAI"
# format = "openai"
# preset = "openai"
# base_url = "https://api.openai.com/v1"
# model = "gpt-5.1"
# api_key_env = "OPENAI_API_KEY"
# plan = "tier-1"
# max_context = 400000
# price_input_per_mtok = 1.25
# price_output_per_mtok = 10.0
# price_cached_per_mtok = 0.125

# [[providers]]
# name = "anthropic"
# vendor = "Anthropic"
# format = "anthropic"
# preset = "anthropic"
# base_url = "https://api.anthropic.com/v1"
# model = "claude-sonnet-4-5"
# api_key_env = "ANTHROPIC_API_KEY"
# max_context = 200000
# price_input_per_mtok = 3.0
# price_output_per_mtok = 15.0
# price_cached_per_mtok = 0.3

# [[providers]]                              # Z.ai GLM, pay-as-you-go endpoint
# name = "zai"
# vendor = "Zhipu/Z.ai"
# format = "openai"
# preset = "zai"
# base_url = "https://api.z.ai/api/paas/v4"
# model = "glm-4.6"
# api_key_env = "ZAI_API_KEY"
# body = { thinking = { type = "disabled" } }   # extra request fields, sent as is
# max_context = 204800
# price_input_per_mtok = 0.6
# price_output_per_mtok = 2.2
# price_cached_per_mtok = 0.11

# [[providers]]                              # Z.ai GLM Coding Plan (plan keys work only here)
# name = "zai-coding"
# vendor = "Zhipu/Z.ai"
# format = "openai"
# preset = "zai-coding"
# base_url = "https://api.z.ai/api/coding/paas/v4"
# model = "glm-4.6"
# api_key_env = "ZAI_CODING_API_KEY"
# plan = "coding-pro"
# max_context = 204800

# [[providers]]
# name = "minimax"
# vendor = "MiniMax"
# format = "openai"
# preset = "minimax"
# base_url = "https://api.minimax.io/v1"
# model = "MiniMax-M2"
# api_key_env = "MINIMAX_API_KEY"
# max_context = 196608
# price_input_per_mtok = 0.3
# price_output_per_mtok = 1.2
# price_cached_per_mtok = 0.03

# [[providers]]
# name = "deepseek"
# vendor = "DeepSeek"
# format = "openai"
# preset = "deepseek"
# base_url = "https://api.deepseek.com/v1"
# model = "deepseek-chat"
# api_key_env = "DEEPSEEK_API_KEY"
# max_context = 128000
# price_input_per_mtok = 0.28
# price_output_per_mtok = 0.42
# price_cached_per_mtok = 0.028

# [[providers]]
# name = "kimi"
# vendor = "Moonshot"
# format = "openai"
# preset = "moonshot"
# base_url = "https://api.moonshot.ai/v1"
# model = "kimi-k2-0905-preview"
# api_key_env = "MOONSHOT_API_KEY"
# max_context = 262144
# price_input_per_mtok = 0.6
# price_output_per_mtok = 2.5
# price_cached_per_mtok = 0.15

# [[providers]]                              # Qwen via DashScope compatible mode
# name = "qwen"
# vendor = "Alibaba"
# format = "openai"
# preset = "qwen"
# base_url = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
# model = "qwen3-max"
# api_key_env = "DASHSCOPE_API_KEY"
# max_context = 262144
# price_input_per_mtok = 1.2
# price_output_per_mtok = 6.0

# [[providers]]                              # Gemini through its OpenAI-compatible endpoint
# name = "gemini"
# vendor = "Google"
# format = "openai"
# preset = "gemini"
# base_url = "https://generativelanguage.googleapis.com/v1beta/openai"
# model = "gemini-2.5-flash"
# api_key_env = "GEMINI_API_KEY"
# max_context = 1048576
# price_input_per_mtok = 0.3
# price_output_per_mtok = 2.5

# [[providers]]
# name = "openrouter"
# vendor = "OpenRouter"
# format = "openai"
# preset = "openrouter"
# base_url = "https://openrouter.ai/api/v1"
# model = "openai/gpt-5.1"
# api_key_env = "OPENROUTER_API_KEY"
# max_context = 400000

# [[providers]]                              # a local vLLM server (no key unless --api-key)
# name = "vllm"
# vendor = "local"
# format = "openai"
# preset = "vllm"
# base_url = "http://127.0.0.1:8000/v1"
# model = "Qwen/Qwen3-8B"
# max_context = 32768

# [[providers]]                              # a local llama.cpp llama-server
# name = "llamacpp"
# vendor = "local"
# format = "openai"
# preset = "llamacpp"                        # sizes long prompts with its /tokenize
# base_url = "http://127.0.0.1:8080/v1"
# model = "local-model"                      # what --alias names (default: the file's path)
# max_context = 8192                         # the server's -c (per slot with -np)

# [[providers]]                              # a local Ollama
# name = "ollama"
# vendor = "local"
# format = "openai"
# preset = "ollama"
# base_url = "http://127.0.0.1:11434/v1"
# model = "llama3.2"
# max_context = 131072

# ---------------------------------------------------------------------------------------
# Probes. Each runs against every provider unless `providers` lists some.
#   task     arithmetic, sorting, counting, json_extract, instructions (short answers);
#            kv_lookup, multi_needle, variable_tracking (long-context retrieval);
#            fixed_prompt (same prompt every time: watches the answer distribution)
#   context  prompt size in tokens ("1k", "32k", "128k"); k = 1000
#   every / cron   the schedule: every = "10m" or cron = "*/10 * * * *"
# ---------------------------------------------------------------------------------------

[[probes]]
name = "short-arithmetic"
task = "arithmetic"
every = "10m"
max_output_tokens = 256
timeout = "120s"

[[probes]]
name = "short-json"
task = "json_extract"
every = "20m"
max_output_tokens = 256

[[probes]]
name = "long-kv-32k"
task = "kv_lookup"
context = "32k"
every = "30m"
max_output_tokens = 128
timeout = "5m"
read_timeout = "60s"

[[probes]]
name = "fixed-prompt"
task = "fixed_prompt"
cron = "15 * * * *"                          # hourly at :15
max_output_tokens = 64

# ---------------------------------------------------------------------------------------
# Budget: probes that would exceed a daily cap are skipped (long-context ones first)
# and recorded as skipped rows with reason "budget".
# ---------------------------------------------------------------------------------------
[budget]
daily_cost_usd = 5.0
daily_tokens = 10000000
# scope = "lake"   # on a lake: count every site's spend (sites sharing one key), not this site's
# [budget.providers.openai]
# daily_cost_usd = 0.5

[report]
out_dir = "nerfwatch-data/reports"
weekday = "mon"
time = "08:00"
timezone = "UTC"

[alerts]
error_rate = 0.5              # share of failed probes in the window that counts as failing
# ttft_p95_ms = 15000         # TTFT p95 above this counts as failing
window = 10                   # most recent probes per provider
failure_threshold = 3         # consecutive failing checks before an alert
success_threshold = 2         # consecutive passing checks before "resolved"
# [[alerts.webhooks]]
# name = "team-slack"
# kind = "slack"              # or "json"
# url_env = "NERFWATCH_SLACK_WEBHOOK"

[daemon]
max_concurrency = 8           # probes in flight at once, all providers together
flush_interval = "2s"         # how often results move from the spool into DuckDB
shutdown_grace = "30s"        # how long in-flight probes may finish on SIGTERM
# metrics_port = 9464         # Prometheus /metrics on 127.0.0.1
# probe_threads = 2           # thousands of probes a minute: probe on worker event loops
"""
