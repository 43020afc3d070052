"""Importing the plugin's entry module loads nothing heavy."""

from __future__ import annotations

import subprocess
import sys


def test_entry_module_imports_no_http_auth_or_pydantic() -> None:
    code = (
        "import sys, modelplug_gemini\n"
        "heavy = [m for m in ('httpx2', 'pydantic', 'google.auth', 'google.genai') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_resolving_imports_no_http_or_auth() -> None:
    code = (
        "import sys, modelplug\n"
        "import modelplug_gemini\n"
        "client = modelplug.Client(plugins=[modelplug_gemini], entry_points=False)\n"
        "route = client.resolve('gemini/gemini-2.5-flash')\n"
        "assert route.endpoint.type == 'gemini'\n"
        "print(','.join(m for m in ('httpx2', 'google.auth') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
