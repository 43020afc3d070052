"""This plugin's settings tables: ``[gemini]`` (timeouts, for both APIs) and
``[vertex]`` (project, location).

``project`` and ``location`` decide where a Vertex request goes (the location is part
of the host name), so they are read from the user's own file, the environment and
explicit settings only: a cloned repository's project file must not redirect traffic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from modelplug.plugin import ConfigError, read_options

if TYPE_CHECKING:
    from modelplug.plugin import Settings

__all__ = ["GeminiOptions", "VertexOptions", "gemini_options", "vertex_options"]

# A Google Cloud region ("us-central1", "europe-west4") or "global": letters, digits and
# dashes, nothing that could change the host name it is put into.
_LOCATION = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
# Project ids are 6-30 lowercase letters, digits and dashes; older numeric project
# numbers and domain-scoped ids ("example.com:proj") are accepted too.
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9.:-]{0,127}$")


@dataclass(frozen=True)
class GeminiOptions:
    """``connect_timeout``: seconds to open a connection; ``read_timeout``: the longest
    silence between two reads of an answer (a thinking model may say nothing for a
    while) before the call fails as transient."""

    connect_timeout: float = field(default=10.0, metadata={"gt": 0})
    read_timeout: float = field(default=300.0, metadata={"gt": 0})
    write_timeout: float = field(default=60.0, metadata={"gt": 0})


@dataclass(frozen=True)
class VertexOptions:
    """``project`` and ``location`` of the Vertex AI endpoint (default: the
    ``GOOGLE_CLOUD_PROJECT`` / ``GOOGLE_CLOUD_LOCATION`` variables, then the project of
    the Application Default Credentials and ``us-central1``). Timeouts are ``[gemini]``'s."""

    project: str | None = None
    location: str | None = None


def gemini_options(settings: Settings) -> GeminiOptions:
    return read_options(settings, "gemini", GeminiOptions)


def vertex_options(settings: Settings) -> VertexOptions:
    """``[vertex]`` from the user's file, the environment and explicit settings (never a
    project file), with the environment variables as defaults, checked."""
    options = read_options(settings, "vertex", VertexOptions, project=False)
    project = options.project or settings.getenv("GOOGLE_CLOUD_PROJECT")
    location = options.location or settings.getenv("GOOGLE_CLOUD_LOCATION") or "us-central1"
    if project is not None and not _PROJECT.match(project):
        raise ConfigError(
            "[vertex] project must be a Google Cloud project id (lowercase letters, digits "
            "and dashes)"
        )
    if not _LOCATION.match(location):
        raise ConfigError(
            "[vertex] location must be a Google Cloud region such as us-central1, or global"
        )
    return VertexOptions(project=project, location=location)
