"""With no SDK configured everything is a no-op: the call works, nothing of the SDK is
imported, and importing the plugin imports no OpenTelemetry at all."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import modelplug_otel
assert not any(m.startswith("opentelemetry") for m in sys.modules), "imported at import"
from modelplug import Client
from modelplug.testing import FakeModel, text
client = Client(plugins=[FakeModel([text("hello")]), modelplug_otel], entry_points=False)
print(client.complete("fake/m", "hi").text)
from opentelemetry import trace
print(type(trace.get_tracer_provider()).__name__)
print(any(m.startswith("opentelemetry.sdk") for m in sys.modules))
print("opentelemetry.trace" in sys.modules)
"""


def test_without_an_sdk_a_call_works_and_records_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hello", "ProxyTracerProvider", "False", "True"]
