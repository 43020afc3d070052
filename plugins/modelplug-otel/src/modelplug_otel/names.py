"""The attribute names and values this plugin writes: the GenAI conventions' names
(checked against opentelemetry-semantic-conventions by the tests), and modelplug's own
under ``modelplug.*``."""

from __future__ import annotations

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_TOP_P = "gen_ai.request.top_p"
REQUEST_TOP_K = "gen_ai.request.top_k"
REQUEST_SEED = "gen_ai.request.seed"
REQUEST_STOP = "gen_ai.request.stop_sequences"
REQUEST_STREAM = "gen_ai.request.stream"
REQUEST_ENCODING_FORMATS = "gen_ai.request.encoding_formats"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION = "gen_ai.usage.cache_creation.input_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
DIMENSIONS = "gen_ai.embeddings.dimension.count"
TOKEN_TYPE = "gen_ai.token.type"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

COST = "modelplug.cost.usd"
ROUTE = "modelplug.route"
ATTEMPT = "modelplug.attempt"
ERROR_STATUS = "modelplug.error.status"
ERROR_REASON = "modelplug.error.reason"
USAGE_REPORTED = "modelplug.usage.reported"
CLOSED_EARLY = "modelplug.closed_early"

DURATION = "gen_ai.client.operation.duration"
TOKEN_USAGE = "gen_ai.client.token.usage"
TIME_TO_FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk"
TIME_PER_OUTPUT_CHUNK = "gen_ai.client.operation.time_per_output_chunk"

# The conventions' bucket boundaries (gen-ai-metrics.md): seconds for durations...
DURATION_BUCKETS = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]  # fmt: skip
# ...tokens for the usage...
TOKEN_BUCKETS = [
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]  # fmt: skip
# ...and the short gaps between chunks.
CHUNK_BUCKETS = [
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
]  # fmt: skip

# modelplug's provider types -> the conventions' well-known gen_ai.provider.name values.
# A type not here is named by its provider (a user's openai-compatible server: its name).
PROVIDER_BY_TYPE = {
    "anthropic": "anthropic",
    "anthropic-batch": "anthropic",
    "openai": "openai",
    "openai-responses": "openai",
    "gemini": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "bedrock": "aws.bedrock",
    "ollama": "ollama",
}
# Well-known names of OpenAI-compatible presets and providers, by provider name.
PROVIDER_BY_NAME = {
    "openai": "openai",
    "groq": "groq",
    "deepseek": "deepseek",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "perplexity": "perplexity",
    "cohere": "cohere",
    "ollama": "ollama",
}
