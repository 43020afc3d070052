"""Nothing listening is ``unreachable`` (another model may answer), and the error names
where the request went, the built-in Gemini API URL included (a route of the built-in
provider holds no base URL of its own)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import modelplug_gemini
import pytest
from modelplug import ModelError
from modelplug.client.client import Client
from modelplug_gemini import http
from modelplug_kit.testing import refused_url


def fail(client: Client) -> ModelError:
    with pytest.raises(ModelError) as caught:
        client.complete("gemini/gemini-2.5-flash", "hi")
    return caught.value


def test_nothing_listening_at_the_users_base_url_is_unreachable(
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    test_key: str,
) -> None:
    url = refused_url()
    monkeypatch.setenv("GEMINI_API_KEY", test_key)
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.gemini]\ntype = "gemini"\nbase_url = "{url}"\n'
    )
    error = fail(make_client(modelplug_gemini))
    assert (error.error_class.kind, error.error_class.fallback) == ("unreachable", True)
    assert str(error).startswith(f"Cannot reach gemini at {url}.")


def test_the_built_in_url_is_named_when_the_route_holds_none(
    make_client: Callable[..., Client], monkeypatch: pytest.MonkeyPatch, test_key: str
) -> None:
    url = refused_url()
    monkeypatch.setattr(http, "GEMINI_BASE", url)  # the built-in URL, made unreachable
    monkeypatch.setenv("GEMINI_API_KEY", test_key)
    client = make_client(modelplug_gemini)
    assert client.resolve("gemini/gemini-2.5-flash").endpoint.base_url is None
    error = fail(client)
    assert error.error_class.kind == "unreachable"
    assert str(error).startswith(f"Cannot reach gemini at {url}.")
