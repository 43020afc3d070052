"""The AWS credential chain: botocore loaded only when a request is signed, a profile
of the shared files, refreshable credentials refreshed before they expire, and a clear
error when there are none."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import botocore.session
import pytest
from botocore.credentials import RefreshableCredentials
from modelplug import ModelError


def credential_of(request) -> str:
    return request.headers["authorization"].split("Credential=")[1].split("/")[0]


def test_import_client_and_resolve_never_load_botocore_httpx2_or_pydantic():
    code = (
        "import sys, modelplug, modelplug_bedrock\n"
        "c = modelplug.Client(plugins=[modelplug_bedrock])\n"
        "r = c.resolve('bedrock/us.anthropic.claude-sonnet-4-6-v1:0')\n"
        "print(r.provider, sorted(m for m in sys.modules if m.split('.')[0] in "
        "('botocore', 'httpx2', 'boto3', 'pydantic')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "bedrock []"


def test_a_profile_of_the_shared_files_signs_the_request(
    client, bedrock, wire_server, tmp_path, monkeypatch
):
    shared = tmp_path / "credentials"
    shared.write_text(
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n"
        "[team]\naws_access_key_id = AKIDTEAM\naws_secret_access_key = team-secret-value\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(shared))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    bedrock.serve(bedrock.recorded("text.eventstream"))
    bedrock.serve(bedrock.recorded("text.eventstream"))
    client(environ={}, profile="team").complete("bedrock/m", "hi")
    client(environ={}).complete("bedrock/m", "hi")
    first, second = wire_server.requests
    assert (credential_of(first), credential_of(second)) == ("AKIDTEAM", "AKIDDEFAULT")


def test_refreshable_credentials_are_refreshed_before_they_expire(
    client, bedrock, wire_server, monkeypatch
):
    refreshed = []

    def refresh():
        refreshed.append(1)
        # Inside botocore's mandatory window: the next request must refresh again.
        soon = datetime.now(UTC) + timedelta(minutes=5)
        n = len(refreshed)
        return {
            "access_key": f"AKIDROLE{n}",
            "secret_key": f"role-secret-{n}",
            "token": f"role-token-{n}",
            "expiry_time": soon.isoformat(),
        }

    expired = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    found = RefreshableCredentials.create_from_metadata(
        {"access_key": "AKIDOLD", "secret_key": "old", "token": "t", "expiry_time": expired},
        refresh,
        "assume-role",
    )
    monkeypatch.setattr(botocore.session.Session, "get_credentials", lambda self: found)
    for _ in range(2):
        bedrock.serve(bedrock.recorded("text.eventstream"))
    c = client(environ={})
    c.complete("bedrock/m", "hi")
    c.complete("bedrock/m", "hi")
    first, second = wire_server.requests
    assert (credential_of(first), credential_of(second)) == ("AKIDROLE1", "AKIDROLE2")
    assert second.headers["x-amz-security-token"] == "role-token-2"
    assert len(refreshed) == 2


def test_no_credentials_anywhere_is_an_auth_error_saying_what_to_set(
    client, wire_server, monkeypatch
):
    monkeypatch.setattr(botocore.session.Session, "get_credentials", lambda self: None)
    with pytest.raises(ModelError) as caught:
        client(environ={}).complete("bedrock/m", "hi")
    error = caught.value
    assert error.error_class.kind == "auth"
    assert "AWS_BEARER_TOKEN_BEDROCK" in str(error) and "aws sso login" in str(error)
    assert not wire_server.requests


def test_the_secret_key_never_appears_in_an_error(client, wire_server):
    secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    wire_server.add(
        f'{{"message":"The request signature we calculated does not match; key {secret}"}}'.encode(),
        status=403,
        path="/model/m/converse-stream",
        content_type="application/json",
        headers={"x-amzn-errortype": "InvalidSignatureException:http://internal.amazon.com/coral/"},
    )
    with pytest.raises(ModelError) as caught:
        client().complete("bedrock/m", "hi")
    error = caught.value
    assert error.error_class.kind == "auth"
    assert "signature we calculated" in str(error)
    texts = [str(error), repr(error), repr(vars(error))]
    assert not [t for t in texts if secret in t]
