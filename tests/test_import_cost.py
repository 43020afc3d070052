"""Nothing slow at import: no vendor SDK, no httpx2 and no price data behind
``import modelplug``, ``Client()`` + ``resolve()`` or ``modelplug plugins``, and not even
pydantic until a call runs.

This checks which modules get imported, not how long it takes: timing goals live in
bench/startup.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from modelplug.host.known_providers import example_spec

HEAVY = ("httpx2", "httpx", "anthropic", "openai", "genai_prices", "litellm")


def imported_after(code: str, tmp_path: Path) -> set[str]:
    script = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            "MODELPLUG_CONFIG": str(tmp_path / "none.toml"),
            "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
            "PATH": "/usr/bin:/bin",
        },
        check=True,
    )
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def prices_index_is_for_installed_genai_prices() -> bool:
    from modelplug_prices.index import index_matches_installed

    return index_matches_installed()


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_import_modelplug_loads_no_heavy_module(tmp_path: Path) -> None:
    modules = imported_after("import modelplug", tmp_path)
    assert heavy(modules) == []
    assert "pydantic" not in modules  # types load on first use


def test_client_and_resolve_with_every_plugin_load_no_heavy_module(tmp_path: Path) -> None:
    modules = imported_after(
        "import modelplug\nc = modelplug.Client()\nc.resolve('echo')\nprint(c.plugins())", tmp_path
    )
    assert heavy(modules) == []
    # Routes, settings and error classes are plain dataclasses: pydantic (more than
    # half of startup) loads with the first call, not with the Client.
    assert "pydantic" not in modules


def test_resolving_real_models_with_every_plugin_loads_no_heavy_module(tmp_path: Path) -> None:
    # The user's path: hosted, local and routed models, their windows from the prices
    # plugin's compact index (genai-prices, pydantic and httpx2 stay unloaded).
    script = (
        "import modelplug\nc = modelplug.Client()\n"
        f"a = c.resolve({example_spec('anthropic')!r})\n"
        "o = c.resolve('ollama/qwen3:8b')\n"
        "r = c.resolve('openrouter/qwen/qwen3-coder')\n"
        "assert a.info.context_window == 1_000_000, a.info\n"
        "assert a.info.max_output_tokens == 128_000, a.info\n"
        "assert r.info.context_window == 262_144, r.info\n"
        "assert o.info.context_window is not None, o.info"
    )
    first = imported_after(script, tmp_path)
    modules = imported_after(script, tmp_path)
    # With a genai-prices newer than the plugin's shipped index, the first process builds
    # the index for it (importing genai-prices once) and keeps it in the data directory;
    # every later process reads that. With the version the index was shipped for, the
    # first process loads nothing heavy either.
    assert heavy(modules) == []
    if prices_index_is_for_installed_genai_prices():
        assert heavy(first) == []
    assert sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")) == []
    assert "asyncio" not in modules


def test_route_records_from_the_package_load_no_pydantic(tmp_path: Path) -> None:
    modules = imported_after("from modelplug import Route, Endpoint, ModelInfo, Price", tmp_path)
    assert "pydantic" not in modules


def test_modelplug_plugins_command_loads_no_heavy_module(tmp_path: Path) -> None:
    modules = imported_after(
        "from modelplug.cli import main\nimport io, contextlib\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['plugins', '--all'])",
        tmp_path,
    )
    assert heavy(modules) == []
    assert "pydantic" not in modules


def test_the_package_exports_every_neutral_type() -> None:
    # modelplug/__init__.py lists the type names by hand (reading types.__all__ would
    # import pydantic); this keeps the two lists from drifting apart.
    import modelplug
    import modelplug.contract.types

    missing = set(modelplug.contract.types.__all__) - set(modelplug.__all__)
    assert missing == set()
    for name in modelplug.contract.types.__all__:
        assert getattr(modelplug, name) is getattr(modelplug.contract.types, name)
