"""Importing the plugin (what `modelplug plugins` does) pays for nothing heavy."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_plugin_does_not_import_httpx2():
    code = (
        "import sys, modelplug_openai_compat as p; "
        "print('httpx2' in sys.modules, 'modelplug_openai_compat.stream' in sys.modules, "
        "'modelplug_openai_compat.embeddings' in sys.modules, "
        "sorted(n for n in dir(p) if n.startswith('modelplug_')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == (
        "False False False ['modelplug_count_tokens', 'modelplug_embed', "
        "'modelplug_key_budget', 'modelplug_list_models', 'modelplug_probe', "
        "'modelplug_providers', 'modelplug_resolve', 'modelplug_stream', "
        "'modelplug_transcribe']"
    )
