"""Importing the plugin (what `modelplug plugins` does) pays for nothing heavy, and the
plugin reaches core only through the kit."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).parent.parent / "src" / "modelplug_ollama"


def test_importing_the_plugin_does_not_import_httpx2():
    code = (
        "import sys, modelplug_ollama as p; "
        "print('httpx2' in sys.modules, 'pydantic' in sys.modules, "
        "'modelplug_ollama.stream' in sys.modules, "
        "sorted(n for n in dir(p) if n.startswith('modelplug_')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == (
        "False False False ['modelplug_embed', 'modelplug_list_models', 'modelplug_probe', "
        "'modelplug_providers', 'modelplug_resolve', 'modelplug_stream']"
    )


def test_the_plugin_imports_only_the_top_level_names_of_core_and_the_kit():
    used = set()
    for path in SOURCE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("modelplug")
                and not node.module.startswith("modelplug_ollama")
            ):
                used.add(node.module)
            elif isinstance(node, ast.Import):
                used.update(a.name for a in node.names if a.name.startswith("modelplug"))
    assert used <= {"modelplug", "modelplug_kit"}
    assert used  # the walk found the imports
