"""Counting before sending, where the server has a tokenizer endpoint (seed 004).

- llama.cpp: ``POST /tokenize`` counts text (``{"content", "add_special",
  "parse_special"}`` -> ``{"tokens": [...]}``); a whole prompt is first rendered by
  ``POST /apply-template`` (the chat request's own body -> ``{"prompt": "..."}``, the
  same parsing as ``/v1/chat/completions``) and that text tokenized as the chat path
  tokenizes it, with the special tokens added and parsed.
- vLLM: ``POST /tokenize`` takes ``{"model", "prompt"}`` for text and ``{"model",
  "messages", "tools"}`` for a prompt, and answers ``{"count", "max_model_len",
  "tokens"}``.

Every other server of this type has no count endpoint (OpenAI's Chat Completions,
OpenRouter, Ollama's /v1, LM Studio): None, a fact. So is a tokenizer path that answers
404, 405 or 501 (an older server, a proxy in front of it).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from modelplug import ErrorClass, Request, Route
from modelplug_kit import StatusError

from .errors import ERRORS
from .http import HTTP, request_headers
from .request import build_body

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["NO_ENDPOINT", "count_tokens", "read_count", "read_prompt"]

# The statuses that say "there is no such endpoint here", not "it failed".
NO_ENDPOINT = frozenset({404, 405, 501})
# The chat body's fields that only matter to generation: /apply-template and vLLM's
# /tokenize read the rest (messages, tools, chat_template_kwargs) as the chat path does.
_SENDING_ONLY = ("stream", "stream_options")


class CountReplyError(ValueError):
    """A tokenizer's answer that holds no count."""


def read_count(data: dict[str, Any]) -> int:
    """The count in a tokenizer's answer: vLLM's ``count``, else the length of
    llama.cpp's ``tokens`` list (ids, or ``{"id", "piece"}`` objects)."""
    count = data.get("count")
    if type(count) is int and count >= 0:
        return count
    tokens = data.get("tokens")
    if isinstance(tokens, list):
        return len(tokens)
    raise CountReplyError("the answer has neither a count nor a tokens list")


def read_prompt(data: dict[str, Any]) -> str:
    """The rendered prompt in llama.cpp's ``/apply-template`` answer."""
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        raise CountReplyError("the answer has no prompt text")
    return prompt


def _root(base_url: str) -> str:
    """The server root: the base URL without its OpenAI ``/v1`` suffix."""
    base = base_url.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


async def _post(client: CallContext, route: Route, path: str, body: dict[str, Any]) -> Any:
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider, required=False)
    headers = request_headers(route, key, client.settings, accept="application/json")
    url = _root(route.endpoint.base_url or "") + path
    return await HTTP.call_json(
        client, route, url, headers=headers, method="POST", body=json.dumps(body).encode()
    )


def _chat_fields(request: Request, route: Route) -> dict[str, Any]:
    body = build_body(request, route)
    return {name: value for name, value in body.items() if name not in _SENDING_ONLY}


async def _llamacpp(client: CallContext, route: Route, content: str | Request) -> int:
    if isinstance(content, str):
        text, special = content, False
    else:
        rendered = await _post(client, route, "/apply-template", _chat_fields(content, route))
        text, special = read_prompt(rendered), True
    tokens = await _post(
        client,
        route,
        "/tokenize",
        {"content": text, "add_special": special, "parse_special": True},
    )
    return read_count(tokens)


async def _vllm(client: CallContext, route: Route, content: str | Request) -> int:
    if isinstance(content, str):
        body: dict[str, Any] = {
            "model": route.model,
            "prompt": content,
            "add_special_tokens": False,
        }
    else:
        chat = _chat_fields(content, route)
        body = {
            name: chat[name]
            for name in ("model", "messages", "tools", "chat_template_kwargs")
            if name in chat
        }
    return read_count(await _post(client, route, "/tokenize", body))


_COUNTERS = {"llamacpp": _llamacpp, "vllm": _vllm}


async def count_tokens(route: Route, content: str | Request, client: CallContext) -> int | None:
    """The exact count of ``content`` on ``route``'s server, or None when it has no
    count endpoint (see the module); a failure raises this plugin's classified error."""
    counter = _COUNTERS.get(route.endpoint.server or "")
    if counter is None:
        return None
    try:
        return await counter(client, route, content)
    except StatusError as exc:
        if exc.status_code in NO_ENDPOINT:
            return None
        raise
    except CountReplyError as exc:
        raise ERRORS.make(
            f"the tokenizer of {route.provider} answered without a count: {exc}",
            ErrorClass(kind="other", reason="no count in the tokenizer's answer"),
            route,
        ) from None
