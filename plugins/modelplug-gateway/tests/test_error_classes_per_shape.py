"""Every ErrorClass kind reaches a caller of every shape (OpenAI chat completions, its
stream, embeddings; Anthropic messages, its stream) as the status, the SDK exception
class and the error body that shape's clients expect: OpenAI's ``code`` a string,
Retry-After where the server named a wait, and ``x-should-retry: false`` where the SDKs
would otherwise send a call again that cannot succeed. The official openai and
anthropic SDKs are the clients, on uvicorn and on granian."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anthropic
import openai
import pytest
from modelplug import ErrorClass, ModelError, hookimpl
from modelplug.testing import FakeModel
from modelplug_gateway.app import Gateway

HELLO = [{"role": "user", "content": "hi"}]


@pytest.fixture(params=["uvicorn", "granian"])
def server(request: pytest.FixtureRequest) -> str:
    """Every test here that serves the gateway runs on both ASGI servers."""
    return str(request.param)


class Case:
    """An error class and what each shape answers for it."""

    def __init__(
        self,
        name: str,
        error_class: ErrorClass,
        openai_answer: tuple[int, type[openai.APIStatusError], str, str],
        anthropic_answer: tuple[int, type[anthropic.APIStatusError], str],
        *,
        should_retry: str | None = None,
        retry_after: str | None = None,
        anthropic_should_retry: str | bool | None = True,
    ) -> None:
        self.name = name
        self.error_class = error_class
        self.openai = openai_answer  # status, exception, type, code
        self.anthropic = anthropic_answer  # status, exception, type
        self.should_retry = should_retry  # x-should-retry (True below: the same)
        self.anthropic_should_retry = (
            should_retry if anthropic_should_retry is True else anthropic_should_retry
        )
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return self.name

    def error(self) -> ModelError:
        return ModelError(f"upstream said no ({self.name})", error_class=self.error_class)


def fails(case: Case) -> Callable[[Any], Any]:
    """A FakeModel step that raises a fresh error of ``case``."""

    def step(request: Any) -> Any:
        raise case.error()

    return step


CASES = [
    Case(
        "transient",
        ErrorClass.transient("server error 500", status=500),
        (502, openai.InternalServerError, "api_error", "upstream_error"),
        (502, anthropic.InternalServerError, "api_error"),
    ),
    Case(
        "transient_timeout",
        ErrorClass.transient("upstream read timed out"),
        (504, openai.InternalServerError, "timeout_error", "timeout"),
        (504, anthropic.GatewayTimeoutError, "timeout_error"),
    ),
    Case(
        "rate_limit",
        ErrorClass(kind="rate_limit", retryable=True, fallback=True, retry_after=7, status=429),
        (429, openai.RateLimitError, "rate_limit_error", "rate_limit_exceeded"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        retry_after="7",
    ),
    Case(
        # A cooled route, as a gateway answers it: not retryable now, a wait named.
        "rate_limit_cooling",
        ErrorClass(kind="rate_limit", fallback=True, retry_after=23.4),
        (429, openai.RateLimitError, "rate_limit_error", "rate_limit_exceeded"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        retry_after="23",
    ),
    Case(
        "overloaded",
        ErrorClass(kind="overloaded", retryable=True, fallback=True),
        (503, openai.InternalServerError, "overloaded_error", "overloaded"),
        (503, anthropic.ServiceUnavailableError, "overloaded_error"),
    ),
    Case(
        "overloaded_529",
        ErrorClass(kind="overloaded", retryable=True, fallback=True, status=529),
        (529, openai.InternalServerError, "overloaded_error", "overloaded"),
        (529, anthropic.OverloadedError, "overloaded_error"),
    ),
    Case(
        "auth",
        ErrorClass(kind="auth", fallback=True, status=401),
        (401, openai.AuthenticationError, "authentication_error", "invalid_api_key"),
        (401, anthropic.AuthenticationError, "authentication_error"),
    ),
    Case(
        "auth_403",
        ErrorClass(kind="auth", fallback=True, status=403),
        (403, openai.PermissionDeniedError, "permission_error", "permission_denied"),
        (403, anthropic.PermissionDeniedError, "permission_error"),
    ),
    Case(
        # OpenAI answers an exhausted quota with a 429 no wait fixes; Anthropic with 402.
        "quota",
        ErrorClass(kind="quota", fallback=True, status=429),
        (429, openai.RateLimitError, "insufficient_quota", "insufficient_quota"),
        (402, anthropic.PaymentRequiredError, "billing_error"),
        should_retry="false",
        anthropic_should_retry=None,  # the SDKs never retry a 402
    ),
    Case(
        "not_found",
        ErrorClass(kind="not_found", fallback=True, status=404),
        (404, openai.NotFoundError, "not_found_error", "model_not_found"),
        (404, anthropic.NotFoundError, "not_found_error"),
    ),
    Case(
        "context_overflow",
        ErrorClass(kind="context_overflow", status=400),
        (400, openai.BadRequestError, "invalid_request_error", "context_length_exceeded"),
        (400, anthropic.BadRequestError, "invalid_request_error"),
    ),
    Case(
        "context_overflow_413",
        ErrorClass(kind="context_overflow", status=413),
        (413, openai.APIStatusError, "request_too_large", "request_too_large"),
        (413, anthropic.ContentTooLargeError, "request_too_large"),
    ),
    Case(
        "bad_request",
        ErrorClass(kind="bad_request", status=422),
        (400, openai.BadRequestError, "invalid_request_error", "invalid_request_error"),
        (400, anthropic.BadRequestError, "invalid_request_error"),
    ),
    Case(
        # A server that cannot do the thing at all (a 501) is a bad request.
        "bad_request_501",
        ErrorClass(kind="bad_request", status=501, reason="not supported"),
        (400, openai.BadRequestError, "invalid_request_error", "invalid_request_error"),
        (400, anthropic.BadRequestError, "invalid_request_error"),
    ),
    Case(
        "content_filter",
        ErrorClass(kind="content_filter", status=400),
        (400, openai.BadRequestError, "invalid_request_error", "content_filter"),
        (400, anthropic.BadRequestError, "invalid_request_error"),
    ),
    Case(
        "aborted",
        ErrorClass(kind="aborted"),
        (499, openai.APIStatusError, "api_error", "aborted"),
        (499, anthropic.ClientClosedRequestError, "api_error"),
    ),
    Case(
        "unreachable",
        ErrorClass(kind="unreachable", retryable=True, fallback=True),
        (502, openai.InternalServerError, "api_error", "upstream_unreachable"),
        (502, anthropic.InternalServerError, "api_error"),
    ),
    Case(
        # Nothing says it may succeed later: the SDKs must not send it again.
        "unreachable_for_good",
        ErrorClass(kind="unreachable", fallback=True),
        (502, openai.InternalServerError, "api_error", "upstream_unreachable"),
        (502, anthropic.InternalServerError, "api_error"),
        should_retry="false",
    ),
    Case(
        "other",
        ErrorClass(kind="other"),
        (500, openai.InternalServerError, "api_error", "server_error"),
        (500, anthropic.InternalServerError, "api_error"),
        should_retry="false",
    ),
]


def test_the_cases_cover_every_error_kind() -> None:
    from typing import get_args

    from modelplug import ErrorKind

    assert {c.error_class.kind for c in CASES} == set(get_args(ErrorKind))


class Embedder:
    """Embeddings for the fake provider that fail as a step says."""

    name = "failing-embedder"

    def __init__(self, case: Case) -> None:
        self.case = case
        self.calls = 0

    @hookimpl
    def modelplug_embed(self, route: Any, request: Any) -> Awaitable[Any] | None:
        if route.endpoint.type != "fake":
            return None
        return self._fail()

    async def _fail(self) -> Any:
        self.calls += 1
        raise self.case.error()


def check_openai(
    raised: pytest.ExceptionInfo[openai.APIStatusError], case: Case, headers: bool = True
) -> None:
    status, exception, kind, code = case.openai
    error = raised.value
    assert type(error) is exception, type(error)
    assert error.status_code == status
    assert isinstance(error.body, dict)
    assert error.body["type"] == kind
    assert error.body["code"] == code and isinstance(error.code, str)
    assert f"upstream said no ({case.name})" in error.body["message"]
    if headers:
        assert error.response.headers.get("retry-after") == case.retry_after
        assert error.response.headers.get("x-should-retry") == case.should_retry


def check_anthropic(raised: pytest.ExceptionInfo[anthropic.APIStatusError], case: Case) -> None:
    status, exception, kind = case.anthropic
    error = raised.value
    assert type(error) is exception, type(error)
    assert error.status_code == status
    assert error.body == {
        "type": "error",
        "error": {"type": kind, "message": error.body["error"]["message"]},  # type: ignore[index]
    }
    assert f"upstream said no ({case.name})" in error.message
    assert error.response.headers.get("retry-after") == case.retry_after
    assert error.response.headers.get("x-should-retry") == case.anthropic_should_retry


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_each_error_class_in_every_shape_is_what_its_sdk_expects(
    make_gateway: Any, serve: Any, case: Case
) -> None:
    fake = FakeModel([fails(case) for _ in range(4)])
    embedder = Embedder(case)
    app: Gateway = make_gateway(fake, embedder)
    with serve(app) as url:
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        with pytest.raises(openai.APIStatusError) as plain:
            gpt.chat.completions.create(model="fake/m", messages=HELLO)
        with pytest.raises(openai.APIStatusError) as streamed:
            gpt.chat.completions.create(model="fake/m", messages=HELLO, stream=True)
        with pytest.raises(openai.APIStatusError) as embedded:
            gpt.embeddings.create(model="fake/m", input="hello")
        claude = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        fields: dict[str, Any] = {"model": "fake/m", "max_tokens": 16, "messages": HELLO}
        with pytest.raises(anthropic.APIStatusError) as messages:
            claude.messages.create(**fields)
        with (
            pytest.raises(anthropic.APIStatusError) as stream,
            claude.messages.stream(**fields) as events,
        ):
            events.get_final_message()
    check_openai(plain, case)
    check_openai(streamed, case)  # failed before its first event: a status of its own
    check_openai(embedded, case)
    check_anthropic(messages, case)
    check_anthropic(stream, case)
    assert fake.remaining == 0 and embedder.calls == 1
    assert app.metrics.errors[case.error_class.kind] == 5


@pytest.mark.parametrize("case", [c for c in CASES if c.should_retry == "false"], ids=repr)
def test_an_error_that_cannot_succeed_later_is_sent_once_by_sdks_that_retry(
    make_gateway: Any, serve: Any, case: Case
) -> None:
    fake = FakeModel([fails(case) for _ in range(6)])
    with serve(make_gateway(fake)) as url:
        # The SDKs' own default: two retries after a 429 or a 5xx.
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=2)
        with pytest.raises(openai.APIStatusError):
            gpt.chat.completions.create(model="fake/m", messages=HELLO)
        claude = anthropic.Anthropic(base_url=url, api_key="k", max_retries=2)
        with pytest.raises(anthropic.APIStatusError):
            claude.messages.create(model="fake/m", max_tokens=16, messages=HELLO)
    assert len(fake.requests) == 2  # one call each, no retry


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.name in ("rate_limit", "quota", "other")], ids=repr
)
def test_an_error_after_the_stream_began_is_an_error_event_of_the_class(
    make_gateway: Any, serve: Any, case: Case
) -> None:
    class Midway(FakeModel):
        async def _play(self, route: Any, request: Any) -> Any:  # type: ignore[override]
            from modelplug.contract.types import TextDelta

            yield TextDelta(text="partial ")
            raise case.error()

    with serve(make_gateway(Midway())) as url:
        gpt = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        seen: list[str] = []
        with pytest.raises(openai.APIError) as openai_raised:
            for chunk in gpt.chat.completions.create(model="fake/m", messages=HELLO, stream=True):
                if chunk.choices and chunk.choices[0].delta.content:
                    seen.append(chunk.choices[0].delta.content)
        claude = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        with (
            pytest.raises(anthropic.APIStatusError) as anthropic_raised,
            claude.messages.stream(model="fake/m", max_tokens=16, messages=HELLO) as events,
        ):
            for _ in events:
                pass
    assert seen == ["partial "]
    body = openai_raised.value.body
    assert isinstance(body, dict)
    assert (body["type"], body["code"]) == case.openai[2:]
    assert anthropic_raised.value.body["error"]["type"] == case.anthropic[2]  # type: ignore[index]


def test_a_gates_refusal_carries_a_string_code_in_the_openai_shape(
    make_gateway: Any, serve: Any, tmp_path: Any
) -> None:
    import asyncio
    from decimal import Decimal

    from modelplug.contract.routes import Price
    from modelplug.contract.types import Usage
    from modelplug.testing.fake import reply
    from modelplug_gateway.key_gate import VirtualKeyGate
    from modelplug_gateway.keys import Hasher, KeyRecord, new_key
    from modelplug_gateway.keys.sqlite_store import SqliteKeys
    from modelplug_kit import MemoryCounters

    hasher = Hasher(b"a test secret of sixteen bytes or more")
    store = SqliteKeys(tmp_path / "keys.sqlite3")
    key = new_key(hasher)
    record = KeyRecord(name="cent", hash=hasher.digest(key), budget=Decimal("0.01"), period="day")
    asyncio.run(store.add(record))
    gate = VirtualKeyGate(store, hasher, MemoryCounters())
    # $1 per million tokens: one call of 10,000 input tokens spends the whole budget.
    fake = FakeModel(
        [reply("ok", usage=Usage(input=10_000, output=0))],
        price=Price(input=Decimal("1"), output=Decimal("1")),
    )
    with serve(make_gateway(fake, gate=gate)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
        client.chat.completions.create(model="fake/m", messages=HELLO)
        with pytest.raises(openai.RateLimitError) as over:
            client.chat.completions.create(model="fake/m", messages=HELLO)
        stranger = openai.OpenAI(base_url=url + "/v1", api_key=new_key(hasher), max_retries=0)
        with pytest.raises(openai.AuthenticationError) as unknown:
            stranger.chat.completions.create(model="fake/m", messages=HELLO)
    assert isinstance(over.value.body, dict) and isinstance(unknown.value.body, dict)
    assert over.value.body["code"] == "rate_limit_exceeded"  # a string, as OpenAI's are
    assert "budget" in over.value.body["message"]
    assert unknown.value.body["code"] == "invalid_api_key"
