"""Where a request goes and the shared httpx2 client (imported here, on first use).

The Gemini API takes its key in the ``x-goog-api-key`` header (never in the URL, where
proxies and logs would keep it); Vertex AI takes an OAuth token from google-auth
(:mod:`modelplug_gemini.auth`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .options import gemini_options, vertex_target
from .routes import VERTEX

if TYPE_CHECKING:
    import httpx2
    from modelplug.plugin import Client, Route

__all__ = ["Target", "shared_http", "target_for"]

GEMINI_BASE = "https://generativelanguage.googleapis.com"
HTTP_KEY = "modelplug-gemini"


@dataclass(frozen=True)
class Target:
    """The URLs of one route: its base and the model's resource path under it."""

    base: str
    model_path: str  # ``v1beta/models/<model>`` or ``v1/projects/.../models/<model>``
    read_timeout: float
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


def target_for(route: Route, client: Client, project: str | None = None) -> Target:
    """The URLs for ``route``. For Vertex, ``project`` is the credentials' project when
    settings name none."""
    model = _model_segment(route.model)
    if route.endpoint.type != VERTEX:
        options = gemini_options(client.settings)
        base = route.endpoint.base_url or GEMINI_BASE
        return Target(base, f"v1beta/models/{model}", options.read_timeout)
    options = gemini_options(client.settings)
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
    return Target(base, path, options.read_timeout, project=project, location=location)


@dataclass
class Shared:
    """What one event loop keeps for this plugin: the AsyncClient and the Vertex
    credentials per provider (refreshed in place when they expire)."""

    http: httpx2.AsyncClient
    credentials: dict[str, Any] = field(default_factory=dict)

    async def aclose(self) -> None:
        # Client.aclose closes what async_http keeps, and that is this record.
        await self.http.aclose()


def shared_http(client: Client) -> Shared:
    """One AsyncClient per event loop (connection pools belong to one loop)."""

    def make() -> Shared:
        import httpx2
        from modelplug.plugin import http_limits

        options = gemini_options(client.settings)
        timeout = httpx2.Timeout(
            connect=options.connect_timeout,
            read=options.read_timeout,
            write=options.write_timeout,
            pool=options.connect_timeout,
        )
        limits = http_limits(client.settings)
        return Shared(httpx2.AsyncClient(timeout=timeout, follow_redirects=False, limits=limits))

    return client.async_http(HTTP_KEY, make)
