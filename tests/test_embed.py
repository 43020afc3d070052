"""Client.embed / aembed and the modelplug_embed hook: the inputs checked before any
plugin is asked, the plugin's vectors finished (model, route, cost), its failures
classified, policies wrapping the call, and the kit's batching helpers."""

from __future__ import annotations

import asyncio
import re
from decimal import Decimal
from typing import Any

import modelplug
import pytest
from modelplug import Client, Cost, Embeddings, EmbedRequest, Usage, hookimpl
from modelplug.builtin.echo import echo_vector
from modelplug.contract.errors import ModelError, NoProviderError, PluginLoadError, RequestError
from modelplug.contract.routes import Endpoint, Route
from modelplug_kit import embed_batches, gather_batches


class Lab:
    """A provider whose vectors say which input they came from: [index, length]."""

    name = "lab"

    def __init__(self, fail: Exception | None = None, vectors: int | None = None) -> None:
        self.fail = fail
        self.vectors = vectors
        self.requests: list[EmbedRequest] = []

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != "lab":
            return None
        return Route(provider="lab", model=model, endpoint=Endpoint(type="lab"))

    @hookimpl
    def modelplug_embed(self, route: Route, request: EmbedRequest) -> Any:
        if route.endpoint.type != "lab":
            return None
        self.requests.append(request)

        async def answer() -> Embeddings:
            if self.fail is not None:
                raise self.fail
            count = self.vectors if self.vectors is not None else len(request.inputs)
            vectors = [
                [float(i), float(len(request.inputs[i % len(request.inputs)]))]
                for i in range(count)
            ]
            return Embeddings(vectors=vectors, usage=Usage(input=7))

        return answer()

    @hookimpl
    def modelplug_price(self, route: Route, usage: Usage) -> Cost | None:
        if route.provider != "lab":
            return None
        return Cost(amount=Decimal(usage.input) / 1000, source="lab table")


def test_modelplug_embed(make_client: Any) -> None:
    lab = Lab()
    client: Client = make_client(lab)
    result = client.embed("lab/vec-1", ["one", "three"], dimensions=2, extra={"task": "q"})
    assert result.vectors == [[0.0, 3.0], [1.0, 5.0]]
    assert result.model == "lab/vec-1"
    assert result.route is not None and result.route.name == "lab/vec-1"
    assert result.cost == Cost(amount=Decimal("0.007"), source="lab table")
    assert lab.requests == [
        EmbedRequest(inputs=["one", "three"], dimensions=2, extra={"task": "q"})
    ]


def test_a_str_gives_one_vector(make_client: Any) -> None:
    lab = Lab()
    client: Client = make_client(lab)
    assert len(asyncio.run(client.aembed("lab/v", "just one")).vectors) == 1
    assert lab.requests[0].inputs == ["just one"]


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ([], "empty list"),
        (["fine", ""], "inputs[1] is an empty string"),
        (["fine", 3], "inputs[1] is int, not a str"),
        (b"bytes", "not bytes"),
        (42, "not int"),
    ],
)
def test_bad_inputs_are_refused_before_any_plugin_is_asked(
    make_client: Any, inputs: Any, words: str
) -> None:
    lab = Lab()
    client: Client = make_client(lab)
    with pytest.raises(RequestError, match=re.escape(words)):
        client.embed("lab/v", inputs)
    assert lab.requests == []


def test_unknown_fields_point_to_extra(make_client: Any) -> None:
    client: Client = make_client(Lab())
    with pytest.raises(RequestError, match=r"takes no task_type: provider fields go in extra="):
        client.embed("lab/v", ["a"], task_type="RETRIEVAL_QUERY")


def test_bad_dimensions_is_a_request_error(make_client: Any) -> None:
    client: Client = make_client(Lab())
    with pytest.raises(RequestError, match="dimensions"):
        client.embed("lab/v", ["a"], dimensions=0)


def test_a_provider_without_embeddings_says_so(make_client: Any) -> None:
    client: Client = make_client()
    client.register(
        type(
            "Chatty",
            (),
            {
                "modelplug_resolve": hookimpl(
                    lambda self, spec: (
                        Route(provider="chatty", model="m") if spec.startswith("chatty/") else None
                    )
                )
            },
        )(),
        "chatty",
    )
    with pytest.raises(NoProviderError, match=r"chatty does not offer embeddings"):
        client.embed("chatty/m", ["a"])


def test_a_failure_is_a_classified_model_error(make_client: Any) -> None:
    client: Client = make_client(Lab(fail=ConnectionResetError("peer reset")))
    with pytest.raises(ModelError) as caught:
        client.embed("lab/v", ["a", "b"])
    assert caught.value.route is not None and caught.value.route.name == "lab/v"
    assert "peer reset" in str(caught.value)


def test_a_wrong_number_of_vectors_is_an_error(make_client: Any) -> None:
    client: Client = make_client(Lab(vectors=1))
    with pytest.raises(ModelError, match="returned 1 vectors for 2 inputs"):
        client.embed("lab/v", ["a", "b"])


def test_echo_embeds_for_tests(make_client: Any) -> None:
    client: Client = make_client()
    result = client.embed("echo", ["Hello world", "hello WORLD"], dimensions=8)
    assert result.vectors[0] == result.vectors[1] == echo_vector("hello world", 8)
    assert result.usage.input == 4 and result.cost is not None and result.cost.amount == 0


def test_module_level_embed_uses_the_default_client(modelplug_config_dir: Any) -> None:
    assert modelplug.embed("echo", "one two").vectors == [echo_vector("one two")]
    assert asyncio.run(modelplug.aembed("echo", ["x"])).model == "echo/echo"


class Counting:
    """A wrapper policy: sees every embedding call before and after the provider."""

    name = "counting"

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    @hookimpl(wrapper=True)
    def modelplug_embed(self, route: Route, request: EmbedRequest) -> Any:
        inner = yield
        if inner is None:
            return None

        async def counted() -> Embeddings:
            result: Embeddings = await inner
            self.seen.append((route.name, len(result.vectors)))
            return result

        return counted()


def test_a_policy_wraps_embedding_calls(make_client: Any) -> None:
    policy = Counting()
    client: Client = make_client(Lab(), policy)
    client.embed("lab/v", ["a", "b", "c"])
    assert policy.seen == [("lab/v", 3)]


def test_an_async_def_embed_hook_is_refused(make_client: Any) -> None:
    class Eager:
        name = "eager"

        @hookimpl
        async def modelplug_embed(self, route: Route) -> None:
            return None

    client: Client = make_client()
    with pytest.warns(modelplug.ModelplugWarning, match="modelplug_embed is an async def"):
        info = client.register(Eager(), "eager")
    assert not info.enabled
    assert info.error is not None and info.error.startswith(PluginLoadError.__name__)


def test_embed_batches_splits_and_keeps_the_start() -> None:
    assert embed_batches(list("abcde"), 2) == [(0, ["a", "b"]), (2, ["c", "d"]), (4, ["e"])]
    with pytest.raises(ValueError, match="at least one input"):
        embed_batches(["a"], 0)


def test_gather_batches_keeps_order_and_bounds_concurrency() -> None:
    running = 0
    most = 0

    async def send(start: int, chunk: list[str]) -> list[str]:
        nonlocal running, most
        running += 1
        most = max(most, running)
        # Later batches finish first: the order must come from the batches, not time.
        await asyncio.sleep(0.001 * (10 - start))
        running -= 1
        return chunk

    batches = embed_batches([str(i) for i in range(10)], 1)
    result = asyncio.run(gather_batches(batches, send, limit=3))
    assert result == [[str(i)] for i in range(10)]
    assert most == 3


def test_gather_batches_names_the_inputs_of_a_failed_batch() -> None:
    async def send(start: int, chunk: list[str]) -> list[str]:
        if start == 4:
            raise RequestError("input too long")
        await asyncio.sleep(0)
        return chunk

    with pytest.raises(RequestError, match=r"input too long \(inputs 4-5 of 7\)") as caught:
        asyncio.run(gather_batches(embed_batches(list("abcdefg"), 2), send))
    assert list(caught.value.embed_inputs) == [4, 5]  # type: ignore[attr-defined]
