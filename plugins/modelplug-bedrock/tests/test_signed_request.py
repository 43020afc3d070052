"""A signed request as the server received it carries the SigV4 signature that
botocore's signer, acting as the verifier, computes from those received bytes (method,
path, the headers the request says it signed, body) for the same credentials and time:
model ids with ``:``, ARNs with ``/``, temporary tokens, a proxy's path prefix and a
configured header with runs of spaces."""

from __future__ import annotations

from datetime import datetime
from unittest import mock

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

ACCESS = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEBYaDtemporary+token/=="


def verified(request, url: str, token: str | None, region: str) -> str:
    """The Authorization header botocore computes for the received request, as AWS
    checks it: the signed headers named in it, at the time in its x-amz-date."""
    names = request.headers["authorization"].split("SignedHeaders=")[1].split(",")[0]
    headers = {name: request.headers[name] for name in names.split(";")}
    received = AWSRequest(method=request.method, url=url, data=request.body, headers=headers)
    when = datetime.strptime(request.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        SigV4Auth(Credentials(ACCESS, SECRET, token), "bedrock", region).add_auth(received)
    return received.headers["Authorization"]


@pytest.mark.parametrize("token", [None, TOKEN])
@pytest.mark.parametrize(
    ("model", "path"),
    [
        (
            "us.anthropic.claude-sonnet-4-6-v1:0",
            "/model/us.anthropic.claude-sonnet-4-6-v1%3A0/converse-stream",
        ),
        (
            "meta.llama3-3-70b-instruct-v1:0",
            "/model/meta.llama3-3-70b-instruct-v1%3A0/converse-stream",
        ),
        (
            # An application inference profile's ARN: its slash is encoded in the path.
            "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc",
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3A"
            "application-inference-profile%2Fabc/converse-stream",
        ),
    ],
)
def test_a_sent_request_carries_the_signature_botocore_verifies(
    client, bedrock, wire_server, token, model, path
):
    wire_server.add(
        bedrock.frames_of(bedrock.recorded("text.eventstream")),
        path=path,
        content_type=bedrock.content_type,
    )
    environ = {"AWS_ACCESS_KEY_ID": ACCESS, "AWS_SECRET_ACCESS_KEY": SECRET}
    if token:
        environ["AWS_SESSION_TOKEN"] = token
    answer = client(environ=environ).complete(f"bedrock/{model}", "hi é")
    assert answer.text.startswith("The capital of France is Paris.")
    (request,) = wire_server.requests
    assert request.path == path
    authorization = request.headers["authorization"]
    assert authorization == verified(request, wire_server.url + path, token, "us-east-1")
    day = request.headers["x-amz-date"][:8]
    assert f"Credential={ACCESS}/{day}/us-east-1/bedrock/aws4_request" in authorization
    assert request.headers.get("x-amz-security-token") == token
    assert SECRET not in str(request.headers)


def test_a_proxy_path_and_a_configured_header_are_signed_as_sent(client, bedrock, wire_server):
    path = "/proxy/model/m/converse-stream"
    wire_server.add(
        bedrock.frames_of(bedrock.recorded("text.eventstream")),
        path=path,
        content_type=bedrock.content_type,
    )
    c = client(
        base_url=wire_server.url + "/proxy",
        region="eu-central-1",
        headers={"X-Team": "two   spaces"},
    )
    c.complete("bedrock/m", "hi")
    (request,) = wire_server.requests
    authorization = request.headers["authorization"]
    signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    assert {"host", "x-team", "content-type", "x-amz-date"} <= set(signed)
    assert authorization == verified(request, wire_server.url + path, None, "eu-central-1")
