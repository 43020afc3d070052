"""Specs, regions and where a request goes."""

from __future__ import annotations

import pytest
from modelplug import ConfigError


def test_a_spec_names_a_model_id_or_an_inference_profile(client):
    route = client().resolve("bedrock/us.anthropic.claude-sonnet-4-6-v1:0")
    assert (route.provider, route.model) == ("bedrock", "us.anthropic.claude-sonnet-4-6-v1:0")
    assert route.info.thinking == "optional"
    assert route.info.structured_output == "tool"
    assert client().resolve("bedrock/meta.llama3-3-70b-instruct-v1:0").info.thinking is None


def test_the_region_comes_from_the_table_then_the_section_then_the_environment(
    client, bedrock, wire_server
):
    from modelplug import read_options
    from modelplug_bedrock.http import Options
    from modelplug_bedrock.providers import region_for

    env = {"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "ap-south-1"}

    def region(c):
        route = c.resolve("bedrock/m")
        return region_for(route, c.settings, read_options(c.settings, "bedrock", Options))

    assert region(client(environ=env, region="us-west-2", options={"region": "eu-north-1"})) == (
        "us-west-2"
    )
    assert region(client(environ=env, region=None, options={"region": "eu-north-1"})) == (
        "eu-north-1"
    )
    assert region(client(environ=env, region=None)) == "eu-west-1"
    assert region(client(environ={"AWS_DEFAULT_REGION": "ap-south-1"}, region=None)) == (
        "ap-south-1"
    )


def test_without_a_base_url_the_request_goes_to_the_regions_endpoint(make_client):
    import modelplug_bedrock
    from modelplug_bedrock.providers import base_url_for

    c = make_client(modelplug_bedrock, environ={"AWS_REGION": "us-east-2"})
    route = c.resolve("bedrock/m")
    assert route.endpoint.base_url is None
    assert base_url_for(route, "us-east-2") == "https://bedrock-runtime.us-east-2.amazonaws.com"


def test_no_region_anywhere_is_a_config_error_naming_the_settings(make_client):
    import modelplug_bedrock

    c = make_client(
        modelplug_bedrock, environ={"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}
    )
    with pytest.raises(ConfigError, match=r"region under \[providers.bedrock\] or \[bedrock\]"):
        c.complete("bedrock/m", "hi")


def test_a_bedrock_api_key_is_sent_as_a_bearer_token_instead_of_a_signature(
    client, bedrock, wire_server
):
    bedrock.serve(bedrock.recorded("text.eventstream"))
    client(environ={"AWS_BEARER_TOKEN_BEDROCK": "ABSKexample-bedrock-key"}).complete(
        "bedrock/m", "hi"
    )
    (request,) = wire_server.requests
    assert request.headers["authorization"] == "Bearer ABSKexample-bedrock-key"
    assert "x-amz-date" not in request.headers


def test_region_and_profile_are_keys_the_type_declares(client):
    with pytest.raises(ConfigError, match=r"\[providers.bedrock\] region"):
        client(region=5).resolve("bedrock/m")
    route = client(profile="work").resolve("bedrock/m")
    assert route.endpoint.options == {"region": "us-east-1", "profile": "work"}


def test_a_region_that_is_not_one_is_refused_before_sending(client, wire_server):
    with pytest.raises(ConfigError, match="not an AWS region"):
        client(region="https://evil.example").complete("bedrock/m", "hi")
    assert not wire_server.requests
