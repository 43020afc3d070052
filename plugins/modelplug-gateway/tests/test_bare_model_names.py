"""A bare model id a caller names (``gpt-4o``, as OpenAI's clients default to) is
served as its vendor's spec (``openai/gpt-4o``), by core's one rule for bare ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from modelplug import Client
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"


def test_a_bare_gpt_id_is_served_as_openais(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    pytest.importorskip("modelplug_openai")
    openai = pytest.importorskip("openai")
    wire_server.add_file(RECORDINGS / "openai_responses_text.sse")
    client = Client(
        enable=["modelplug-openai"],
        config={
            "providers": {
                "openai": {"type": "openai-responses", "base_url": wire_server.url + "/v1"}
            }
        },
        user_config=tmp_path / "none.toml",
        project_dir="/",
        environ={"MODELPLUG_DATA_DIR": str(tmp_path / "data")},
    )
    with client, serve(make_gateway(client=client)) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        answer = sdk.chat.completions.with_raw_response.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    assert answer.status_code == 200
    assert answer.headers["x-modelplug-route"] == "openai/gpt-4o"
    assert answer.parse().choices[0].message.content == "The final result is **570**."
    (sent,) = wire_server.requests
    assert (sent.path, sent.json()["model"]) == ("/v1/responses", "gpt-4o")
