"""This plugin's settings table, ``[gemini]``: timeouts (for both APIs) and Vertex AI's
``vertex_project`` and ``vertex_location``.

The Vertex pair decides where a request goes (the location is part of the host name),
so it is read from the user's own file, the environment and explicit settings only: a
cloned repository's project file must not redirect traffic (it is warned about and
ignored). One table, not a ``[vertex]`` of its own: core names settings sections after
plugins, and this plugin is ``gemini``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modelplug import ConfigError, read_options, warn
from modelplug_kit import Timeouts

if TYPE_CHECKING:
    from modelplug import Settings

__all__ = ["SECTION", "GeminiOptions", "VertexTarget", "vertex_target"]

SECTION = "gemini"
# A Google Cloud region ("us-central1", "europe-west4") or "global": letters, digits and
# dashes, nothing that could change the host name it is put into.
_LOCATION = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
# Project ids are 6-30 lowercase letters, digits and dashes; older domain-scoped ids
# ("example.com:proj") are accepted too.
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9.:-]{0,127}$")
_VERTEX_KEYS = ("vertex_project", "vertex_location")


@dataclass(frozen=True)
class GeminiOptions(Timeouts):
    """The kit's timeouts (``connect_timeout``, ``first_byte_timeout``, ``read_timeout``,
    ``write_timeout``; a thinking model may say nothing for a while), and
    ``vertex_project`` and ``vertex_location``: the Vertex AI endpoint (default:
    ``GOOGLE_CLOUD_PROJECT`` / ``GOOGLE_CLOUD_LOCATION``, then the credentials' project
    and ``us-central1``)."""

    vertex_project: str | None = None
    vertex_location: str | None = None


@dataclass(frozen=True)
class VertexTarget:
    project: str | None
    location: str


def vertex_target(settings: Settings) -> VertexTarget:
    """Vertex AI's project and location from the user's settings (never a project
    file) or the environment, checked."""
    trusted = read_options(settings, SECTION, GeminiOptions, project=False)
    everywhere = settings.plugin_options(SECTION)
    for key in _VERTEX_KEYS:
        if key in everywhere and everywhere[key] != getattr(trusted, key):
            warn(
                f"ignored [{SECTION}] {key} from the project file: only your user settings "
                "may say where Vertex AI requests go"
            )
    project = trusted.vertex_project or settings.getenv("GOOGLE_CLOUD_PROJECT")
    location = trusted.vertex_location or settings.getenv("GOOGLE_CLOUD_LOCATION") or "us-central1"
    if project is not None and not _PROJECT.match(project):
        raise ConfigError(
            f"[{SECTION}] vertex_project must be a Google Cloud project id (lowercase "
            "letters, digits and dashes)"
        )
    if not _LOCATION.match(location):
        raise ConfigError(
            f"[{SECTION}] vertex_location must be a Google Cloud region such as "
            "us-central1, or global"
        )
    return VertexTarget(project=project, location=location)
