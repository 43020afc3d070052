"""A key never appears in an error, a repr, a log line or a Notice.

The root conftest.py also scans every report, captured output, log record and warning
of the whole suite for the planted key.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from modelplug import hookimpl
from modelplug.client.client import Client
from modelplug.contract.errors import ModelError
from modelplug.contract.secrets import redact
from modelplug.contract.settings import Settings
from modelplug.contract.types import Endpoint, Event, Notice, Request, Route, TextDelta


class LeakyProvider:
    """Does everything wrong: puts its key in a Notice and in its exception."""

    name = "leaky"

    @hookimpl
    def modelplug_resolve(self, spec: str, settings: Settings) -> Route | None:
        if not spec.startswith("leaky/"):
            return None
        lab = settings.providers["leaky"]
        return Route(
            provider="leaky",
            model=spec.partition("/")[2],
            endpoint=Endpoint(
                type="leaky",
                base_url=lab.base_url,
                api_key_env=lab.api_key_env,
                headers=lab.headers,
            ),
        )

    @hookimpl
    def modelplug_stream(
        self, route: Route, request: Request, client: Client
    ) -> AsyncIterator[Event] | None:
        if route.provider != "leaky":
            return None
        key = client.settings.api_key(route.endpoint.api_key_env, route.provider)

        async def run() -> AsyncIterator[Event]:
            yield Notice(kind="info", message=f"using key {key}")
            yield TextDelta(text="x")
            logging.getLogger("modelplug.leaky").warning("sending Authorization: Bearer %s", key)
            raise RuntimeError(f"401 Unauthorized: invalid api key {key}")

        return run()


@pytest.fixture
def leaky_client(make_client: Any, modelplug_config_dir: Any, planted_key: str) -> Client:
    (modelplug_config_dir / "config.toml").write_text(
        '[providers.leaky]\ntype = "leaky"\nbase_url = "https://leaky.example"\n'
        'api_key_env = "PLANTED_API_KEY"\nheaders = { X-Team-Token = "team-token-abcdef" }\n'
    )
    client: Client = make_client(LeakyProvider())
    return client


def test_key_is_masked_in_notices_errors_and_logs(
    leaky_client: Client, planted_key: str, caplog: pytest.LogCaptureFixture
) -> None:
    notices: list[str] = []
    with caplog.at_level(logging.DEBUG), pytest.raises(ModelError) as caught:
        leaky_client.complete(
            "leaky/m", "hi", on_event=lambda e: isinstance(e, Notice) and notices.append(e.message)
        )
    assert notices == ["using key ***"]
    assert planted_key not in str(caught.value) and "***" in str(caught.value)
    assert planted_key not in caplog.text and "Bearer ***" in caplog.text
    assert planted_key not in repr(caught.value)


def test_route_and_settings_reprs_hold_no_secret(leaky_client: Client, planted_key: str) -> None:
    route = leaky_client.resolve("leaky/m")
    assert "team-token-abcdef" not in repr(route)
    assert "team-token-abcdef" not in str(route.public_dict())
    assert "team-token-abcdef" not in repr(leaky_client.settings.providers)
    assert planted_key not in repr(route) and planted_key not in repr(leaky_client.settings)


def test_redact_masks_every_registered_secret(leaky_client: Client, planted_key: str) -> None:
    leaky_client.settings.api_key("PLANTED_API_KEY", "leaky")
    assert redact(f"a {planted_key} b team-token-abcdef c") == "a *** b *** c"


def test_a_notice_without_a_secret_is_shown_as_made_and_one_with_a_secret_is_a_masked_copy(
    leaky_client: Client, planted_key: str
) -> None:
    from modelplug.client.calls import _redacted

    leaky_client.settings.api_key("PLANTED_API_KEY", "leaky")  # the key is registered
    plain = Notice(kind="route", message="group g: a/m answers", details={"to": "a/m"})
    assert _redacted(plain) is plain  # nothing to mask: no copy on every call
    leaky = Notice(kind="info", message="plain", details={"key": planted_key})
    masked = _redacted(leaky)
    assert masked is not leaky and masked.details == {"key": "***"}
    assert leaky.details == {"key": planted_key}  # the plugin's own object is left alone
