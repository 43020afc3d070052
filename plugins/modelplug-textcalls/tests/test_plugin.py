"""The distribution: its entry point, and a cheap import."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from types import SimpleNamespace


def test_entry_point_names_the_hook_module() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="modelplug")}
    assert found.get("modelplug-textcalls") == "modelplug_textcalls"


def test_importing_the_plugin_does_not_load_the_readers() -> None:
    code = (
        "import sys, modelplug_textcalls\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('modelplug_textcalls.'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_installed_plugin_serves_the_hook_through_entry_points(kit: SimpleNamespace) -> None:
    from modelplug.client.client import Client

    client = Client(entry_points=True, user_config=kit.client.settings.user_path)
    try:
        names = {info.name for info in client.plugins()}
        assert "modelplug-textcalls" in names
        result = client.hook.modelplug_parse_text_tool_calls(
            text='{"name": "search", "arguments": {}}',
            tools=kit.TOOLS,
            mode="whole",
            final=True,
            state=None,
        )
        assert [c.name for c in result.calls] == ["search"]
    finally:
        client.close()
