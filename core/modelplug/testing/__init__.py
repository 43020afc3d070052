"""The test kit for plugin authors.

Installed with core as the pytest plugin ``modelplug`` (entry point ``pytest11``), it
provides these fixtures:

- ``modelplug_config_dir``: an empty temporary user config dir; MODELPLUG_CONFIG points
  into it and the project lookup starts in an empty temporary directory.
- ``make_client(*plugins, entry_points=False, config=None, **kwargs)``: an isolated
  Client (no installed plugin unless ``entry_points=True`` or named in ``plugins``).
- ``modelplug_client``: ``make_client()`` with nothing but core's built-ins.
- ``register_plugin(obj)``: register a plugin on ``modelplug_client`` for one test.
- ``fake_model``: a :class:`FakeModel` already registered on ``modelplug_client``.
Outside pytest, import :class:`FakeModel` and the builders from here. What a provider
plugin's own tests need (the loopback wire server, the conformance suite) is in the
provider kit, :mod:`modelplug_kit.testing`.
"""

import os
from collections.abc import Mapping
from typing import Any

from modelplug.contract.errors import ScriptExhaustedError
from modelplug.testing.fake import FakeModel, reply, structured, text, thinking, tool_use

__all__ = [
    "FakeModel",
    "ScriptExhaustedError",
    "calm_hypothesis",
    "examples",
    "hypothesis_profile",
    "reply",
    "structured",
    "text",
    "thinking",
    "tool_use",
]

#: Examples per property test in each profile: ``ci`` keeps hypothesis' own default,
#: ``dev`` (the test command a contributor runs) a quarter of it.
HYPOTHESIS_EXAMPLES = {"ci": 100, "dev": 25}


def hypothesis_profile(environ: Mapping[str, str] | None = None) -> str:
    """The profile :func:`calm_hypothesis` loads: ``MODELPLUG_HYPOTHESIS_PROFILE`` when
    set, else ``ci`` where the environment variable ``CI`` is set (as CI services set
    it), else ``dev``."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("MODELPLUG_HYPOTHESIS_PROFILE")
    if chosen:
        if chosen not in HYPOTHESIS_EXAMPLES:
            raise ValueError(
                f"MODELPLUG_HYPOTHESIS_PROFILE={chosen!r}: set it to one of "
                f"{', '.join(HYPOTHESIS_EXAMPLES)}, or unset it"
            )
        return chosen
    return "ci" if environ.get("CI", "").lower() not in ("", "0", "false") else "dev"


def calm_hypothesis(profile: str | None = None) -> None:
    """Register the hypothesis profiles ``ci`` and ``dev`` and load one (``profile``, or
    :func:`hypothesis_profile`'s choice). Neither has timing checks (``deadline=None``,
    no ``too_slow`` health check): a busy CI machine must not fail a property test by
    chance. ``ci`` runs hypothesis' default 100 examples a test, ``dev`` 25, and
    :func:`examples` scales a test's own count the same way. Call it from a
    ``conftest.py``; hypothesis is imported only then."""
    from hypothesis import HealthCheck, settings

    calm: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
    for name, count in HYPOTHESIS_EXAMPLES.items():
        # print_blob: a failure in CI prints the line that replays it anywhere.
        settings.register_profile(name, max_examples=count, print_blob=name == "ci", **calm)
    settings.register_profile("modelplug", **calm)  # the name before there were two
    settings.load_profile(profile or hypothesis_profile())


def examples(count: int) -> int:
    """A property test's example count under the loaded profile: ``count`` in ``ci``, a
    quarter of it (at least ten, or ``count`` when smaller) in ``dev``. Write
    ``@settings(max_examples=examples(300))`` where a test wants more or fewer examples
    than the profile's default: an explicit ``max_examples=300`` would ignore the
    profile. Counts are read when the test module is imported, after the conftest that
    called :func:`calm_hypothesis`."""
    from hypothesis import settings

    loaded = settings.default.max_examples if settings.default is not None else 100
    scaled = round(count * loaded / HYPOTHESIS_EXAMPLES["ci"])
    return max(scaled, min(count, 10))
