"""Where a request goes, with which headers, and this plugin's HTTP path (the kit's).

The Gemini API takes its key in the ``x-goog-api-key`` header (never in the URL, where
proxies and logs would keep it); Vertex AI takes an OAuth token from google-auth
(:mod:`modelplug_gemini.auth`). httpx2 is imported by the kit on first use, never when
the plugin module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from modelplug import ConfigError, redact
from modelplug_kit import ProviderHTTP

from .auth import auth_headers, vertex_credentials
from .errors import ERRORS, auth_failed
from .options import SECTION, GeminiOptions, vertex_target
from .routes import VERTEX

if TYPE_CHECKING:
    from modelplug import CallContext, Route

__all__ = ["HTTP", "Target", "prepare", "target_for"]

GEMINI_BASE = "https://generativelanguage.googleapis.com"
HTTP_KEY = "modelplug-gemini"
# Vertex credentials live as long as the loop's shared client does: a token is refreshed
# in place on the credentials object, so the same one must be found again.
CREDENTIALS_KEY = "modelplug-gemini:vertex-credentials"

HTTP = ProviderHTTP(HTTP_KEY, section=SECTION, errors=ERRORS, options=GeminiOptions)


@dataclass(frozen=True)
class Target:
    """The URLs of one route: its base and the model's resource path under it."""

    base: str
    model_path: str  # ``v1beta/models/<model>`` or ``v1/projects/.../models/<model>``
    project: str | None = None
    location: str | None = None

    @property
    def stream_url(self) -> str:
        return f"{self.base}/{self.model_path}:streamGenerateContent?alt=sse"

    @property
    def model_url(self) -> str:
        return f"{self.base}/{self.model_path}"


def _model_segment(model: str) -> str:
    # A model id is letters, digits, dots and dashes; anything else is escaped so a
    # spec can never change the path it is put into.
    return quote(model, safe="-._~")


def target_for(route: Route, client: CallContext, project: str | None = None) -> Target:
    """The URLs for ``route``. For Vertex, ``project`` is the credentials' project when
    settings name none."""
    model = _model_segment(route.model)
    if route.endpoint.type != VERTEX:
        base = route.endpoint.base_url or GEMINI_BASE
        return Target(base, f"v1beta/models/{model}")
    vertex = vertex_target(client.settings)
    location = vertex.location
    project = vertex.project or project
    if route.endpoint.base_url:
        base = route.endpoint.base_url
    elif location == "global":
        base = "https://aiplatform.googleapis.com"
    else:
        base = f"https://{location}-aiplatform.googleapis.com"
    path = (
        f"v1/projects/{quote(project or '', safe='')}/locations/{location}"
        f"/publishers/google/models/{model}"
    )
    return Target(base, path, project=project, location=location)


async def prepare(route: Route, client: CallContext) -> tuple[Target, dict[str, str]]:
    """Where a request about the route's model goes and the headers that authenticate
    it (Vertex credentials made or refreshed first)."""
    credentials = None
    project = None
    if route.endpoint.type == VERTEX:
        kept: dict[str, Any] = client.async_http(CREDENTIALS_KEY, dict)
        credentials, project = vertex_credentials(kept, route)
    target = target_for(route, client, project)
    if route.endpoint.type == VERTEX and not target.project:
        raise ConfigError(
            f"the provider {route.provider} needs a Google Cloud project: set vertex_project "
            "under [gemini] in your settings, or GOOGLE_CLOUD_PROJECT"
        )
    try:
        headers = await auth_headers(client, route, credentials)
    except Exception as exc:
        if type(exc).__module__.startswith("google.auth"):
            raise auth_failed(route, redact(str(exc))[:300]) from None
        raise
    headers["content-type"] = "application/json"
    return target, headers


#: The running loop's shared AsyncClient (``.http``) and options (``.options``).
