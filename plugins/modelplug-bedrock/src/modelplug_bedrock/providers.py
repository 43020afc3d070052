"""The providers this plugin serves (``bedrock`` and the user's providers of type
``bedrock``), turning a spec into a Route, and where a request goes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modelplug import (
    ConfigError,
    Endpoint,
    ModelInfo,
    Provider,
    Route,
    Settings,
    declared_providers,
    user_endpoint,
)

if TYPE_CHECKING:
    from .http import Options

__all__ = ["NAME", "TYPE", "base_url_for", "provider_names", "region_for", "resolve"]


@dataclass(frozen=True)
class ProviderTable:
    """The keys a ``[providers.NAME] type = "bedrock"`` table takes beyond core's:
    the AWS ``region`` it calls, and the ``profile`` of the shared AWS files whose
    credentials sign its requests. (Here, not beside the HTTP path: resolving a spec
    must not load the kit's HTTP module.)"""

    region: str | None = None
    profile: str | None = None


TYPE = "bedrock"
NAME = "bedrock"
DEFAULT_URL = "https://bedrock-runtime.{region}.amazonaws.com"
# Model families whose Converse answers carry reasoning blocks (Claude's extended
# thinking, DeepSeek-R1): a thinking request reaches them through
# additionalModelRequestFields or natively.
_THINKING = re.compile(r"(anthropic\.claude-(3-7|sonnet-4|opus-4|haiku-4))|deepseek\.r1")
# Claude on Bedrock takes cachePoint blocks (so do Nova models).
_CACHE = re.compile(r"anthropic\.claude|amazon\.nova")


def provider_names(settings: Settings) -> list[Provider]:
    return declared_providers(
        settings,
        TYPE,
        builtin=[NAME],
        native=True,
        example="us.anthropic.claude-sonnet-4-6-v1:0",
        options=ProviderTable,
    )


def endpoint_for(provider: str, settings: Settings) -> Endpoint | None:
    """No base URL by default: Bedrock's is the region's, decided when sending (a
    ``base_url`` reaches a proxy, a VPC endpoint or a test server). Never local by its
    address: its credentials are AWS's own."""
    return user_endpoint(
        settings,
        provider,
        TYPE,
        builtin=provider == NAME,
        needs_base_url=False,
        local=False,
        options=ProviderTable,
    )


def resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """``bedrock/<model id or inference profile>``; an id holds ``:`` and ``.``, an ARN
    ``/`` too, so the spec is split at its first ``/`` only."""
    provider, _, model = spec.partition("/")
    if provider_type not in (None, TYPE) or not model:
        return None
    endpoint = endpoint_for(provider, settings)
    if endpoint is None:
        return None
    info = ModelInfo(
        supports_tools=True,
        # Converse has no JSON mode common to its models: a forced tool is.
        structured_output="tool",
        thinking="optional" if _THINKING.search(model) else None,
    )
    return Route(provider=provider, model=model, endpoint=endpoint, info=info)


def takes_cache_points(model: str) -> bool:
    return _CACHE.search(model) is not None


def region_for(route: Route, settings: Settings, options: Options) -> str:
    """``region`` of the provider's table, else ``[bedrock] region``, else AWS_REGION /
    AWS_DEFAULT_REGION from the user's environment."""
    region = (
        route.endpoint.options.get("region")
        or options.region
        or settings.getenv("AWS_REGION")
        or settings.getenv("AWS_DEFAULT_REGION")
    )
    if not region:
        raise ConfigError(
            f"{route.provider}: no AWS region: set region under [providers.{route.provider}] "
            "or [bedrock] in your settings, or AWS_REGION in the environment"
        )
    if not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d+", region):
        raise ConfigError(f"{route.provider}: {region!r} is not an AWS region (like us-east-1)")
    return str(region)


def base_url_for(route: Route, region: str) -> str:
    return (route.endpoint.base_url or DEFAULT_URL.format(region=region)).rstrip("/")
