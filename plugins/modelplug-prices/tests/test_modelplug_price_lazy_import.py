"""genai-prices costs about 0.4 s to import: the plugin must not import it until the
first price."""

from __future__ import annotations

import subprocess
import sys


def run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )


def test_modelplug_price_plugin_import_does_not_import_genai_prices():
    done = run("import modelplug_prices", "-X", "importtime")
    imported = [line for line in done.stderr.splitlines() if "|" in line]
    assert any(line.rstrip().endswith("modelplug_prices") for line in imported)
    assert not [line for line in imported if "genai_prices" in line]


def test_modelplug_price_first_price_call_imports_genai_prices():
    code = (
        "import sys, modelplug_prices\n"
        "from modelplug.contract.types import Endpoint, Route, Usage\n"
        "from modelplug.host.settings import load_settings\n"
        "assert 'genai_prices' not in sys.modules\n"
        "route = Route(provider='openai', model='gpt-4o', endpoint=Endpoint(type='x'))\n"
        "settings = load_settings(user_path='/nonexistent/none.toml', use_project=False)\n"
        "cost = modelplug_prices.modelplug_price(route, Usage(input=1000), 1.0, settings)\n"
        "print('genai_prices' in sys.modules, cost.amount)\n"
    )
    assert run(code).stdout.split() == ["True", "0.0025"]


def test_modelplug_price_local_route_never_imports_genai_prices():
    code = (
        "import sys, modelplug_prices\n"
        "from modelplug.contract.types import Endpoint, Route, Usage\n"
        "from modelplug.host.settings import load_settings\n"
        "route = Route(provider='ollama', model='qwen3', endpoint=Endpoint(type='x', local=True))\n"
        "settings = load_settings(user_path='/nonexistent/none.toml', use_project=False)\n"
        "cost = modelplug_prices.modelplug_price(route, Usage(input=1000), 1.0, settings)\n"
        "print('genai_prices' in sys.modules, cost.amount)\n"
    )
    assert run(code).stdout.split() == ["False", "0"]
