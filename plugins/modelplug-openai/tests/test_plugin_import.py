"""Importing the plugin's entry module imports neither httpx2 nor pydantic nor an SDK."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_plugin_is_light():
    code = (
        "import sys, modelplug_openai; "
        "print(sorted(m for m in ('httpx2', 'pydantic', 'openai', 'modelplug.contract.types') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_resolving_imports_no_http_library():
    code = (
        "import sys; from modelplug import Client; "
        "c = Client(enable=['modelplug-openai'], entry_points=True, environ={}); "
        "r = c.resolve('openai/gpt-5'); "
        "print(r.endpoint.type, sorted(m for m in ('httpx2', 'openai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "openai-responses []"
