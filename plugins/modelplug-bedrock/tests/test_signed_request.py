"""SigV4 signatures against botocore's signer (botocore.auth.SigV4Auth) for fixed
credentials and a frozen clock, and a signed request as the server received it."""

from __future__ import annotations

from datetime import UTC, datetime
from unittest import mock

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from modelplug_bedrock.sigv4 import sign

ACCESS = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
NOW = datetime(2026, 12, 2, 4, 30, 15, tzinfo=UTC)
HOST = "https://bedrock-runtime.us-west-2.amazonaws.com"


def botocore_signature(url, headers, body, token, region, now=NOW):
    request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    with mock.patch("botocore.auth.get_current_datetime", return_value=now.replace(tzinfo=None)):
        SigV4Auth(Credentials(ACCESS, SECRET, token), "bedrock", region).add_auth(request)
    return request.headers["Authorization"]


@pytest.mark.parametrize("token", [None, "FwoGZXIvYXdzEBYaDtemporary+token/=="])
@pytest.mark.parametrize(
    "path",
    [
        "/model/us.anthropic.claude-sonnet-4-6-v1%3A0/converse-stream",
        "/model/meta.llama3-3-70b-instruct-v1%3A0/converse-stream",
        # An inference profile's ARN: its slashes are encoded in the path.
        "/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Aapplication-inference-profile%2Fabc/converse-stream",
    ],
)
def test_the_signature_is_botocores(token, path):
    url = HOST + path
    body = b'{"messages":[{"role":"user","content":[{"text":"hi \xc3\xa9"}]}]}'
    headers = {
        "content-type": "application/json",
        "accept": "application/vnd.amazon.eventstream",
        "x-team": "  two   spaces  ",
    }
    mine = sign(
        "POST",
        url,
        headers,
        body,
        access_key=ACCESS,
        secret_key=SECRET,
        token=token,
        region="us-west-2",
        now=NOW,
    )
    assert mine["authorization"] == botocore_signature(url, headers, body, token, "us-west-2")
    assert mine["x-amz-date"] == "20261202T043015Z"
    assert mine.get("x-amz-security-token") == token


def test_a_port_and_a_query_are_signed_as_botocore_signs_them():
    url = "http://127.0.0.1:8443/proxy/model/m/converse-stream?b=2&a=1%2F"
    headers = {"content-type": "application/json"}
    mine = sign(
        "POST",
        url,
        headers,
        b"{}",
        access_key=ACCESS,
        secret_key=SECRET,
        token=None,
        region="eu-central-1",
        now=NOW,
    )
    assert mine["host"] == "127.0.0.1:8443"
    assert mine["authorization"] == botocore_signature(url, headers, b"{}", None, "eu-central-1")


def test_a_sent_request_carries_the_signature_botocore_makes_for_it(client, bedrock, wire_server):
    bedrock.serve(bedrock.recorded("text.eventstream"))
    client().complete("bedrock/m", "hi")
    (request,) = wire_server.requests
    stamp = request.headers["x-amz-date"]
    when = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    signed = {k: v for k, v in request.headers.items() if k in ("content-type", "accept")}
    expected = botocore_signature(
        wire_server.url + request.path, signed, request.body, None, "us-east-1", now=when
    )
    assert request.headers["authorization"] == expected
    assert SECRET not in str(request.headers)
