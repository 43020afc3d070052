"""Structured output in core: a schema or a pydantic model in, a validated value out, in
each of the three modes, with re-asks, repairs recorded and truncation refused."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug import (
    ModelInfo,
    OutputTruncatedError,
    OutputValidationError,
    RequestError,
    as_request,
    hookimpl,
)
from modelplug.contract.types import Notice, Request, Usage
from modelplug.testing import FakeModel, reply, structured, text, tool_use
from pydantic import BaseModel


class City(BaseModel):
    name: str
    population: int


CITY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
}


class Moded(FakeModel):
    """A FakeModel that says which structured mode its model has."""

    def __init__(self, steps: list[Any], mode: str | None, tools: bool = True) -> None:
        super().__init__(steps)
        self.mode = mode
        self.tools = tools

    @hookimpl
    def modelplug_resolve(self, spec: str, provider_type: str | None) -> Any:
        route = super().modelplug_resolve(spec, provider_type)
        if route is not None:
            route.info = ModelInfo(structured_output=self.mode, supports_tools=self.tools)  # type: ignore[arg-type]
        return route


def test_a_pydantic_model_comes_back_as_an_instance(make_client: Any) -> None:
    fake = FakeModel([structured({"name": "Paris", "population": 2_100_000})])
    response = make_client(fake).complete("fake/m", "Largest city of France?", output_schema=City)

    assert response.parsed == City(name="Paris", population=2_100_000)
    assert response.metadata["structured_output"]["mode"] == "native"
    assert fake.requests[0].output_schema is not None  # native: the provider sees it


def test_a_json_schema_comes_back_as_parsed_json(make_client: Any) -> None:
    fake = FakeModel([text('```json\n{"name": "Lyon", "population": 520000}\n```')])
    response = make_client(fake).complete("fake/m", "hi", output_schema=CITY)

    assert response.parsed == {"name": "Lyon", "population": 520000}
    assert response.text == '{"name": "Lyon", "population": 520000}'


def test_tool_mode_forces_one_tool_and_reads_its_input(make_client: Any) -> None:
    fake = Moded([tool_use("City", {"name": "Nice", "population": 340000})], mode="tool")
    response = make_client(fake).complete("fake/m", "hi", output_schema=City)

    sent = fake.requests[0]
    assert [t.name for t in sent.tools] == ["City"] and sent.tool_choice == "City"
    assert sent.output_schema is None
    assert response.parsed == City(name="Nice", population=340000)
    assert response.stop_reason == "end_turn" and response.tool_calls == []


def test_tool_mode_wraps_a_schema_that_is_not_an_object(make_client: Any) -> None:
    fake = Moded([tool_use("output", {"value": ["a", "b"]})], mode="tool")
    schema = {"type": "array", "items": {"type": "string"}}
    response = make_client(fake).complete("fake/m", "hi", output_schema=schema)

    assert fake.requests[0].tools[0].input_schema["properties"]["value"] == schema
    assert response.parsed == ["a", "b"]


def test_prompt_mode_puts_the_schema_in_the_system_prompt(make_client: Any) -> None:
    fake = Moded([text('{"name": "Metz", "population": 120000}')], mode=None, tools=False)
    response = make_client(fake).complete("fake/m", "hi", system="Be brief.", output_schema=CITY)

    system = fake.requests[0].system or ""
    assert system.startswith("Be brief.") and '"population"' in system
    assert response.metadata["structured_output"]["mode"] == "prompt"
    assert response.parsed["name"] == "Metz"


def test_an_unknown_model_with_tools_gets_tool_mode(make_client: Any) -> None:
    fake = Moded([tool_use("City", {"name": "Pau", "population": 77000})], mode="unknown")
    make_client(fake).complete("fake/m", "hi", output_schema=City)
    assert fake.requests[0].tool_choice == "City"


def test_an_invalid_answer_is_asked_again_once_with_the_errors(make_client: Any) -> None:
    fake = FakeModel(
        [
            reply('{"name": "Paris", "population": "many"}', usage=Usage(input=10, output=5)),
            reply('{"name": "Paris", "population": 2100000}', usage=Usage(input=30, output=6)),
        ]
    )
    events: list[Any] = []
    response = make_client(fake).complete(
        "fake/m", "hi", output_schema=City, output_retries=1, on_event=events.append
    )

    assert response.parsed.population == 2_100_000
    assert (response.usage.input, response.usage.output) == (40, 11)  # both attempts
    assert len(response.metadata["structured_output"]["attempts"]) == 2
    again = fake.requests[1].messages
    assert "population" in again[-1].text and again[-2].role == "assistant"
    assert any(isinstance(e, Notice) and e.kind == "structured_retry" for e in events)


def test_an_answer_still_invalid_raises_with_the_raw_text_and_errors(make_client: Any) -> None:
    fake = FakeModel([text('{"name": "Paris"}')])
    with pytest.raises(OutputValidationError) as caught:
        make_client(fake).complete("fake/m", "hi", output_schema=City)

    assert caught.value.raw == '{"name": "Paris"}'
    assert any("population" in e for e in caught.value.errors)


def test_a_syntax_slip_is_repaired_and_recorded(make_client: Any) -> None:
    fake = FakeModel([text("{'name': 'Caen', 'population': 105000,}")])
    response = make_client(fake).complete("fake/m", "hi", output_schema=City)

    assert response.parsed.name == "Caen"
    assert response.metadata["structured_output"]["repairs"]


def test_a_reply_cut_at_max_tokens_is_a_truncation_never_repaired(make_client: Any) -> None:
    fake = FakeModel([reply('{"name": "Paris", "popul', stop_reason="max_tokens")])
    with pytest.raises(OutputTruncatedError, match="max_tokens"):
        make_client(fake).complete("fake/m", "hi", output_schema=City, output_retries=2)
    assert len(fake.requests) == 1  # no re-ask can fix a budget


def test_an_invalid_schema_is_refused_before_any_call(make_client: Any) -> None:
    fake = FakeModel([text("{}")])
    with pytest.raises(RequestError, match="output_schema is not a valid JSON Schema"):
        make_client(fake).complete("fake/m", "hi", output_schema={"type": "objekt"})
    assert fake.requests == []


def test_the_echo_model_answers_structured_requests(make_client: Any) -> None:
    response = make_client().complete("echo", "Paris", output_schema=City)
    assert response.parsed == City(name="Paris", population=0)


def test_a_request_with_a_schema_round_trips_through_json() -> None:
    request = as_request("hi", output_schema=City)
    again = Request.model_validate_json(request.model_dump_json())
    assert again.output_schema is not None
    assert again.output_schema.json_schema == City.model_json_schema()


def test_streaming_shows_the_json_and_done_carries_the_value(make_client: Any) -> None:
    fake = Moded([tool_use("City", {"name": "Brest", "population": 140000})], mode="tool")
    events = list(make_client(fake).stream("fake/m", "hi", output_schema=City))

    shown = "".join(e.text for e in events if type(e).__name__ == "TextDelta")
    done = events[-1].response
    assert shown == done.text
    assert done.parsed.name == "Brest"


def test_the_user_forces_a_mode_per_model_in_settings(make_client: Any) -> None:
    fake = FakeModel([text('{"name": "Albi", "population": 49000}')])
    config = {"models": {"fake/m": {"structured_output": "prompt"}}}
    response = make_client(fake, config=config).complete("fake/m", "hi", output_schema=City)

    assert response.metadata["structured_output"]["mode"] == "prompt"
    assert fake.requests[0].output_schema is None  # prompt mode: the schema is in the system
    assert '"population"' in (fake.requests[0].system or "")
