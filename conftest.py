"""Session-wide settings for every test in the repository (core and plugins).

The planted-key watch comes from core's pytest plugin (``modelplug.testing``), so each
plugin's tests have it from their sdist too; here the key is also put in the
environment for the whole run, for the core tests that read it outside a fixture.

Property tests run without hypothesis' timing checks: CI's 2-core machine may be slow or
busy, and timing goals belong in bench/, not in tests that could then fail by chance.
With ``CI`` set they run every example they ask for (the ``ci`` profile); elsewhere a
quarter of them (``dev``), so that the README's test command finishes in minutes.
"""

from __future__ import annotations

import os

from modelplug.testing import calm_hypothesis
from modelplug.testing.leaks import PLANTED_KEY

calm_hypothesis()
os.environ["PLANTED_API_KEY"] = PLANTED_KEY
