"""A tool call cut by the output limit is never handed back as a call to run: core
raises TruncatedToolCallError for it, whatever the provider plugin did with it (marked
it in metadata["truncated_tool_calls"] as the in-repo plugins do, or passed its broken
input on as a string at stop_reason max_tokens), with nothing the model wrote lost, and
no policy retries it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplug import Client, ModelError, TruncatedToolCallError, hookimpl
from modelplug.client.cut_calls import truncated_tool_calls
from modelplug.contract.routes import Endpoint, Provider, Route
from modelplug.contract.settings import Settings
from modelplug.contract.types import (
    Done,
    Event,
    Message,
    Request,
    Response,
    StopReason,
    TextBlock,
    TextDelta,
    ToolUseBlock,
    Usage,
)

CUT = '{"path": "notes.md", "content": "# Notes\\n\\nThe first'
WHOLE = ToolUseBlock(id="t1", name="read", input={"path": "a.md"})


class Cutter:
    """An in-house adapter whose answer is text, then the blocks it is given."""

    def __init__(
        self, blocks: list[Any], stop: StopReason, metadata: dict[str, Any] | None = None
    ) -> None:
        self.blocks = blocks
        self.stop = stop
        self.metadata = metadata or {}
        self.calls = 0

    @hookimpl
    def modelplug_resolve(self, spec: str, settings: Settings) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != "lab":
            return None
        return Route(provider="lab", model=model, endpoint=Endpoint(type="lab"))

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name="lab", type="lab")]

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event] | None:
        return self._run() if route.provider == "lab" else None

    async def _run(self) -> AsyncIterator[Event]:
        self.calls += 1
        yield TextDelta(text="Writing it now.")
        content = [TextBlock(text="Writing it now."), *self.blocks]
        yield Done(
            response=Response(
                message=Message(role="assistant", content=content),
                stop_reason=self.stop,
                usage=Usage(input=10, output=64),
                metadata=dict(self.metadata),
            )
        )


def cut_error(client: Client, **fields: Any) -> TruncatedToolCallError:
    with pytest.raises(TruncatedToolCallError) as caught:
        client.complete("lab/m", "write notes.md", **fields)
    return caught.value


def test_a_broken_call_at_max_tokens_is_an_error_and_not_a_call(make_client: Any) -> None:
    plugin = Cutter([WHOLE, ToolUseBlock(id="t2", name="write", input=CUT)], "max_tokens")
    error = cut_error(make_client(plugin), max_tokens=64)
    assert isinstance(error, ModelError)
    assert not error.retryable and not error.error_class.fallback
    assert (error.tool_name, error.arguments) == ("write", CUT)
    assert [(c.id, c.name) for c in error.calls] == [("t2", "write")]
    assert "max_tokens (64)" in str(error) and "write" in str(error)
    # Nothing the model wrote is lost; the cut call is listed, not left as a call.
    partial = error.partial
    assert partial is not None
    assert partial.text == "Writing it now." and partial.usage.output == 64
    assert [c.id for c in partial.tool_calls] == ["t1"]
    assert partial.metadata["truncated_tool_calls"] == [
        {"id": "t2", "name": "write", "arguments": CUT}
    ]


def test_a_call_a_plugin_marked_as_cut_is_an_error(make_client: Any) -> None:
    marked = {"truncated_tool_calls": [{"id": "t2", "name": "write", "arguments": CUT}]}
    error = cut_error(make_client(Cutter([], "max_tokens", marked)))
    assert (error.tool_name, error.arguments) == ("write", CUT)
    assert error.partial is not None and error.partial.metadata == marked


def test_a_closed_call_with_broken_json_is_the_callers_to_judge(make_client: Any) -> None:
    # Not a cut: the call closed (stop_reason tool_use); its raw input is kept as it is.
    plugin = Cutter([ToolUseBlock(id="t2", name="write", input="{broken}")], "tool_use")
    response = make_client(plugin).complete("lab/m", "write notes.md")
    assert [c.input for c in response.tool_calls] == ["{broken}"]


def test_an_answer_cut_in_its_text_is_a_response(make_client: Any) -> None:
    response = make_client(Cutter([], "max_tokens")).complete("lab/m", "write notes.md")
    assert response.stop_reason == "max_tokens" and response.text == "Writing it now."


def test_the_fallback_policy_does_not_retry_a_cut_call(make_client: Any) -> None:
    pytest.importorskip("modelplug_fallback")
    plugin = Cutter([ToolUseBlock(id="t2", name="write", input=CUT)], "max_tokens")
    config = {"fallbacks": {"lab/m": ["lab/spare"]}, "fallback": {"retries": 3}}
    client = make_client(plugin, "modelplug-fallback", config=config)
    cut_error(client)
    assert plugin.calls == 1, "neither retried nor sent to the fallback"


blocks = st.lists(
    st.one_of(
        st.builds(TextBlock, text=st.text(max_size=8)),
        st.builds(
            ToolUseBlock,
            name=st.sampled_from(["read", "write"]),
            input=st.one_of(
                st.text(max_size=12), st.dictionaries(st.text(max_size=3), st.integers())
            ),
        ),
    ),
    max_size=4,
)
marks = st.one_of(
    st.none(),
    st.lists(
        st.one_of(
            st.fixed_dictionaries(
                {
                    "id": st.text(max_size=3),
                    "name": st.text(max_size=5),
                    "arguments": st.text(max_size=8),
                }
            ),
            st.dictionaries(st.text(max_size=3), st.one_of(st.none(), st.integers())),
            st.integers(),
        ),
        max_size=3,
    ),
)


@settings(max_examples=200, deadline=None)
@given(blocks, st.sampled_from(["end_turn", "tool_use", "max_tokens", "other"]), marks)
def test_any_answer_is_passed_on_or_refused_with_no_broken_call_left(
    content: list[Any], stop: StopReason, marked: list[Any] | None
) -> None:
    metadata = {} if marked is None else {"truncated_tool_calls": marked}
    response = Response(
        message=Message(role="assistant", content=content), stop_reason=stop, metadata=metadata
    )
    route = Route(provider="lab", model="m", endpoint=Endpoint(type="lab"))
    error = truncated_tool_calls(route, Request(messages=[]), response)
    broken = [b for b in content if isinstance(b, ToolUseBlock) and not isinstance(b.input, dict)]
    if error is None:
        assert not marked and not (stop == "max_tokens" and broken)
        return
    assert not error.retryable and error.calls and error.partial is not None
    if stop == "max_tokens":
        assert all(isinstance(c.input, dict) for c in error.partial.tool_calls)
    assert error.partial.text == response.text
