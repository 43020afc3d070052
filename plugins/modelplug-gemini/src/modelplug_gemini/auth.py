"""Credentials: the Gemini API key, or a Vertex AI token from google-auth.

google-auth is imported on the first Vertex call only. Its credentials are kept per
provider and event loop (beside the loop's shared client) and refreshed (in a worker
thread: the refresh is a blocking HTTP call) when they are missing or expired. Every
token is registered as a secret, so it is masked in any error, log line or notice.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from modelplug import ConfigError, MissingKeyError, register_secret

from .routes import DEFAULT_KEY_VARIABLE, SECOND_KEY_VARIABLE

if TYPE_CHECKING:
    from modelplug import CallContext, Route

__all__ = ["api_key", "auth_headers", "vertex_credentials"]

SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


def api_key(client: CallContext, route: Route) -> str | None:
    """The Gemini API key: the provider's variable; for the default one,
    ``GEMINI_API_KEY`` and then ``GOOGLE_API_KEY``. Missing: "Set GEMINI_API_KEY...".
    None for a provider with no key variable (a server on this machine takes none)."""
    variable = route.endpoint.api_key_env
    if variable is None:
        return None
    key = client.settings.api_key(variable, route.provider, required=False)
    if key is None and variable == DEFAULT_KEY_VARIABLE:
        key = client.settings.api_key(SECOND_KEY_VARIABLE, route.provider, required=False)
    if key is None:
        raise MissingKeyError(variable, route.provider)
    return key


def vertex_credentials(kept: dict[str, Any], route: Route) -> tuple[Any, str | None]:
    """The Application Default Credentials for ``route``'s provider and their project
    (made once per provider and kept in ``kept``, the event loop's record)."""
    if route.provider in kept:
        credentials, project = kept[route.provider]
        return credentials, project
    try:
        import google.auth
        import google.auth.exceptions
    except ImportError:
        raise ConfigError(
            "Vertex AI needs google-auth: pip install 'modelplug-gemini[vertex]'"
        ) from None
    try:
        credentials, project = google.auth.default(scopes=SCOPES)
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise ConfigError(
            f"no Google Cloud credentials for the provider {route.provider}: {exc} "
            "(run `gcloud auth application-default login`, or set "
            "GOOGLE_APPLICATION_CREDENTIALS)"
        ) from None
    kept[route.provider] = (credentials, project)
    return credentials, project


def _refresh(credentials: Any) -> None:
    from google.auth.transport.requests import Request

    credentials.refresh(Request())


async def bearer_token(credentials: Any) -> str:
    """A valid access token, refreshed first when missing or expired."""
    if not credentials.valid or not credentials.token:
        await asyncio.to_thread(_refresh, credentials)
    token = credentials.token
    if not isinstance(token, str) or not token:
        raise ConfigError("google-auth returned no access token for Vertex AI")
    register_secret(token)
    return token


async def auth_headers(
    client: CallContext, route: Route, credentials: Any | None
) -> dict[str, str]:
    """The headers that authenticate one request: the provider's configured headers
    and either ``x-goog-api-key`` or ``Authorization: Bearer``."""
    # A route holds header names only; the values come from the user's settings now.
    headers = client.settings.provider_headers(route.provider)
    for value in headers.values():
        register_secret(value)
    # One credential header: ours wins over a configured one of the same name.
    headers = {
        k: v for k, v in headers.items() if k.lower() not in ("authorization", "x-goog-api-key")
    }
    if credentials is None:
        key = api_key(client, route)
        if key is not None:
            headers["x-goog-api-key"] = key
    else:
        headers["authorization"] = f"Bearer {await bearer_token(credentials)}"
    return headers
