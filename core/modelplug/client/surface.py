"""What a call's run needs of the Client beyond what hooks see.

The modules of one call (calls, embed_call, structured, tool_support, served_models,
call_habits) take the Client typed as this Protocol, so the Client imports them and
none of them imports the Client back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from modelplug.contract.context import CallContext

if TYPE_CHECKING:
    from modelplug.client.probe_cache import ProbeCache
    from modelplug.contract.repetition import RepetitionDetector, RepetitionGuard
    from modelplug.contract.routes import Route
    from modelplug.contract.types import Request

__all__ = ["ClientSurface"]


class ClientSurface(CallContext, Protocol):
    """The Client as the modules of a call use it."""

    def route_for(self, spec: str | Route | None) -> Route:
        """The Route for a spec, or ``spec`` itself when it is one already."""
        ...

    def probe_cache(self) -> ProbeCache:
        """The probe answers later resolves use."""
        ...

    def repetition_detector(
        self, route: Route, request: Request, guard: RepetitionGuard
    ) -> RepetitionDetector | None:
        """The detector that watches one call's stream for a loop."""
        ...

    async def acount_prompt(
        self, spec: str | Route | None, messages: Request | None = None
    ) -> int | None:
        """The prompt's size as the route's server counts it; None when it cannot."""
        ...

    async def alist_models(self, provider: str) -> list[str] | None:
        """What a provider's server says it serves; None when it cannot be asked."""
        ...
