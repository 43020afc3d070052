"""Vertex AI: the URL from project and location, the token from google-auth
credentials in the Authorization header (refreshed when expired), never printed."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from modelplug import ConfigError, ModelError
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer

pytest.importorskip("google.auth")

VertexClient = Callable[..., tuple[Client, Any]]


def test_vertex_token_reaches_the_authorization_header(
    vertex_client: VertexClient,
    wire_server: WireServer,
    recorded: Callable[[str], Path],
    planted_token: str,
) -> None:
    client, credentials = vertex_client()
    wire_server.add_file(recorded("vertex_text.sse"))
    response = client.complete("vertex/gemini-2.5-flash", "hi")
    assert response.model == "vertex/gemini-2.5-flash"
    assert (
        response.text
        == "A snail is determined to win a prestigious car race. He shows up at the starting line."
    )
    assert (response.stop_reason, response.usage.input, response.usage.output) == (
        "end_turn",
        9,
        21,
    )
    sent = wire_server.requests[0]
    assert sent.headers["authorization"] == f"Bearer {planted_token}"
    assert "x-goog-api-key" not in sent.headers
    assert sent.path == (
        "/v1/projects/proj-test/locations/europe-west4/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert credentials.refreshes == 1


def test_vertex_token_is_refreshed_when_expired_and_reused_when_valid(
    vertex_client: VertexClient,
    wire_server: WireServer,
    recorded: Callable[[str], Path],
    planted_token: str,
) -> None:
    client, credentials = vertex_client()
    for _ in range(2):
        wire_server.add_file(recorded("text.sse"))
    client.complete("vertex/gemini-2.5-flash", "hi")
    assert credentials.refreshes == 1
    credentials.expiry = datetime.datetime(2000, 1, 1)  # long expired (naive UTC)
    wire_server.add_file(recorded("text.sse"))
    client.complete("vertex/gemini-2.5-flash", "again")
    assert credentials.refreshes == 2
    assert wire_server.requests[-1].headers["authorization"] == f"Bearer {planted_token}-2"
    wire_server.requests.clear()
    client.complete("vertex/gemini-2.5-flash", "once more")
    assert credentials.refreshes == 2  # still valid: not refreshed


def test_vertex_token_is_never_printed(
    vertex_client: VertexClient, wire_server: WireServer, planted_token: str
) -> None:
    client, _ = vertex_client()
    wire_server.add(
        f'{{"error": {{"code": 401, "message": "bad token {planted_token}", "status": "UNAUTHENTICATED"}}}}',
        status=401,
        content_type="application/json",
    )
    with pytest.raises(ModelError) as caught:
        client.complete("vertex/gemini-2.5-flash", "hi")
    assert caught.value.kind == "auth"
    assert planted_token not in str(caught.value)
    assert planted_token not in repr(client.resolve("vertex/gemini-2.5-flash"))


def test_vertex_with_user_oauth_credentials(
    vertex_client: VertexClient, wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    from google.oauth2.credentials import Credentials

    token = "ya29.planted-oauth-user-token-42"
    client, _ = vertex_client(Credentials(token=token))
    wire_server.add_file(recorded("text.sse"))
    client.complete("vertex/gemini-2.5-flash", "hi")
    assert wire_server.requests[0].headers["authorization"] == f"Bearer {token}"


def test_vertex_needs_a_project(vertex_client: VertexClient, wire_server: WireServer) -> None:
    client, _ = vertex_client(options="", adc_project=None)
    with pytest.raises(ConfigError, match="needs a Google Cloud project"):
        client.complete("vertex/gemini-2.5-flash", "hi")
    assert wire_server.requests == []


def test_vertex_project_defaults_to_the_credentials_project(
    vertex_client: VertexClient, wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    client, _ = vertex_client(options="", adc_project="adc-proj")
    wire_server.add_file(recorded("text.sse"))
    client.complete("vertex/gemini-2.5-flash", "hi")
    assert wire_server.requests[0].path.startswith("/v1/projects/adc-proj/locations/us-central1/")


def test_vertex_location_cannot_change_the_host(vertex_client: VertexClient) -> None:
    client, _ = vertex_client(
        options='vertex_project = "p-1"\nvertex_location = "evil.example/x"\n'
    )
    with pytest.raises(ConfigError, match="vertex_location must be a Google Cloud region"):
        client.complete("vertex/gemini-2.5-flash", "hi")


def test_a_project_file_cannot_point_vertex_elsewhere(
    vertex_client: VertexClient, wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    Path("modelplug.toml").write_text(
        '[gemini]\nvertex_project = "attacker-proj"\nvertex_location = "us-east1"\n'
    )
    client, _ = vertex_client()
    wire_server.add_file(recorded("text.sse"))
    with pytest.warns(Warning, match="only your user settings may say where Vertex AI"):
        client.complete("vertex/gemini-2.5-flash", "hi")
    assert "/projects/proj-test/locations/europe-west4/" in wire_server.requests[0].path


def test_a_failed_token_refresh_is_an_auth_error(
    vertex_client: VertexClient, wire_server: WireServer
) -> None:
    from google.auth import credentials as google_credentials
    from google.auth.exceptions import RefreshError

    class Revoked(google_credentials.Credentials):  # type: ignore[misc]
        def refresh(self, request: Any) -> None:
            raise RefreshError("invalid_grant: Token has been expired or revoked.")

    client, _ = vertex_client(Revoked())
    with pytest.raises(ModelError) as caught:
        client.complete("vertex/gemini-2.5-flash", "hi")
    assert caught.value.kind == "auth"
    assert "invalid_grant" in str(caught.value)
    assert wire_server.requests == []
