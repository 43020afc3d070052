"""The kit's tests: property tests without timing checks (a busy 2-core machine must
not fail them by chance), every example under ``CI``, a quarter of them elsewhere."""

from __future__ import annotations

from modelplug.testing import calm_hypothesis

calm_hypothesis()
