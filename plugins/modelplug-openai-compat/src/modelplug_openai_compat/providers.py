"""The providers this plugin serves: built-in presets and the user's own providers of
type ``openai-compatible``, and turning a spec into a Route."""

from __future__ import annotations

from dataclasses import dataclass

from modelplug import ModelInfo, Provider, Route, Settings, declared_providers, user_endpoint

TYPE = "openai-compatible"
# The servers whose Chat Completions endpoint constrains decoding to a JSON schema
# (request.py sends it as each one takes it).
STRUCTURED_SERVERS = frozenset(
    {
        "openai",
        "openrouter",
        "vllm",
        "lmstudio",
        "ollama",
        "llamacpp",
        "litellm",
        # Hosted services whose docs give response_format json_schema for their models
        # (Groq, DeepSeek and DeepInfra take it for some models only, or json_object only).
        "mistral",
        "xai",
        "together",
        "fireworks",
        "cerebras",
        "perplexity",
    }
)
DEFAULT_CONTEXT_WINDOW = 32_768


@dataclass(frozen=True)
class Preset:
    base_url: str | None
    api_key_env: str | None = None
    local: bool = False
    # The server software (Endpoint.server): probes, the reasoning dialect and quirks
    # go by it. A preset's is its own name, or the name it stands in for.
    server: str | None = None


PRESETS: dict[str, Preset] = {
    "ollama": Preset("http://localhost:11434/v1", local=True, server="ollama"),
    "lmstudio": Preset("http://localhost:1234/v1", local=True, server="lmstudio"),
    "llamacpp": Preset("http://localhost:8080/v1", local=True, server="llamacpp"),
    "vllm": Preset("http://localhost:8000/v1", local=True, server="vllm"),
    "openrouter": Preset("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", server="openrouter"),
    "openai": Preset("https://api.openai.com/v1", "OPENAI_API_KEY", server="openai"),
    # The Chat Completions path to OpenAI and Ollama under names of its own, for when
    # the native plugins (the Responses API, Ollama's /api/chat) serve openai/... and
    # ollama/...: these two names stay this plugin's.
    "openai-chat": Preset("https://api.openai.com/v1", "OPENAI_API_KEY", server="openai"),
    "ollama-openai": Preset("http://localhost:11434/v1", local=True, server="ollama"),
    # Hosted services by name: each one's base URL and key variable as its own docs and
    # SDK give them; its quirks (services.py, reasoning.py) go by the server name.
    "mistral": Preset("https://api.mistral.ai/v1", "MISTRAL_API_KEY", server="mistral"),
    "groq": Preset("https://api.groq.com/openai/v1", "GROQ_API_KEY", server="groq"),
    "xai": Preset("https://api.x.ai/v1", "XAI_API_KEY", server="xai"),
    "deepseek": Preset("https://api.deepseek.com", "DEEPSEEK_API_KEY", server="deepseek"),
    "together": Preset("https://api.together.xyz/v1", "TOGETHER_API_KEY", server="together"),
    "fireworks": Preset(
        "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY", server="fireworks"
    ),
    "cerebras": Preset("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY", server="cerebras"),
    "deepinfra": Preset(
        "https://api.deepinfra.com/v1/openai", "DEEPINFRA_API_KEY", server="deepinfra"
    ),
    "perplexity": Preset("https://api.perplexity.ai", "PERPLEXITY_API_KEY", server="perplexity"),
}
# The hosted services among the presets (the quirks of each: services.py, reasoning.py).
HOSTED_SERVICES = (
    "mistral",
    "groq",
    "xai",
    "deepseek",
    "together",
    "fireworks",
    "cerebras",
    "deepinfra",
    "perplexity",
)
# The most inputs one POST {base}/embeddings takes, by server: OpenAI documents 2,048;
# the local servers set no count (llama.cpp and vLLM bound the tokens of one input, not
# the list), so a list is cut where a batch still answers in seconds. An unknown
# server gets the smallest.
EMBED_BATCH: dict[str, int] = {
    "openai": 2048,
    "openrouter": 2048,
    "vllm": 256,
    "llamacpp": 256,
    "ollama": 256,
    "lmstudio": 128,
    "litellm": 256,
}
DEFAULT_EMBED_BATCH = 64
# The servers that refuse `dimensions` (llama.cpp answers the model's own size).
NO_DIMENSIONS = frozenset({"llamacpp"})
# A user's provider under a name of its own: no defaults.
NO_PRESET = Preset(None)
# What `server = "..."` in [providers.NAME] may say.
SERVERS = (
    "llamacpp",
    "vllm",
    "ollama",
    "lmstudio",
    "litellm",
    "openrouter",
    "openai",
    *HOSTED_SERVICES,
)


def provider_names(settings: Settings) -> list[Provider]:
    """Presets plus the user's providers of this type, all generic (not native): a
    plugin that speaks a provider's own API wins its name when both are installed."""
    return declared_providers(settings, TYPE, builtin=PRESETS)


def resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """``provider/model`` -> Route, split at the first ``/`` (``openrouter/qwen/x``)."""
    provider, _, model = spec.partition("/")
    if not model or provider_type not in (None, TYPE):
        return None  # (a spec naming no model never comes here: core refuses it first)
    # A local preset is local (free) even with a key; any other provider by core's rule.
    preset = PRESETS.get(provider, NO_PRESET)
    endpoint = user_endpoint(
        settings,
        provider,
        TYPE,
        builtin=preset is not NO_PRESET,
        base_url=preset.base_url,
        api_key_env=preset.api_key_env,
        local=preset.local or None,
        server=preset.server,
        servers=SERVERS,
    )
    if endpoint is None:
        return None
    # Servers known to constrain decoding answer a schema natively; of an unknown
    # server nothing is assumed, and core picks tool or prompt mode.
    info = ModelInfo(structured_output="native" if endpoint.server in STRUCTURED_SERVERS else None)
    if endpoint.local:
        # Free, by core's rule for a local route; the window is this plugin's guess.
        known = settings.model_settings(provider, model)
        if known is None or known.context_window is None:
            info.context_window = DEFAULT_CONTEXT_WINDOW
            info.notes.append(
                f"{provider}/{model} has no context_window entry; assuming "
                f"{DEFAULT_CONTEXT_WINDOW:,} tokens. Set context_window under "
                f'[models."{provider}/{model}"] (and make the server load that much: '
                "e.g. OLLAMA_CONTEXT_LENGTH, llama-server -c), or run "
                "`modelplug resolve --probe` to ask the server."
            )
    return Route(provider=provider, model=model, endpoint=endpoint, info=info)
