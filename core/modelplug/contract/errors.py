"""The error taxonomy (ErrorClass) and modelplug's exceptions.

Every exception modelplug raises to a caller derives from :class:`ModelplugError`. Its
message never holds a secret: it passes through :func:`modelplug.contract.secrets.redact`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

from modelplug.contract.secrets import redact

if TYPE_CHECKING:
    from modelplug.contract.types import Response, Route

__all__ = [
    "CONTEXT_PHRASES",
    "ConfigError",
    "CutToolCall",
    "ErrorClass",
    "ErrorKind",
    "MissingKeyError",
    "ModelError",
    "ModelplugError",
    "NoKeyBudgetError",
    "NoProviderError",
    "OutputTruncatedError",
    "OutputValidationError",
    "PluginError",
    "PluginLoadError",
    "PluginLockError",
    "RequestError",
    "ScriptExhaustedError",
    "TextCallError",
    "TruncatedToolCallError",
    "UnknownProviderError",
    "class_for_status",
    "describe_error",
]

ErrorKind: TypeAlias = Literal[
    "transient",
    "rate_limit",
    "overloaded",
    "auth",
    "quota",
    "not_found",
    "context_overflow",
    "bad_request",
    "content_filter",
    "aborted",
    "unreachable",
    "other",
]
_KINDS: tuple[str, ...] = get_args(ErrorKind)


@dataclass(frozen=True, kw_only=True)
class ErrorClass:
    """What kind of failure an error is, and what may be done about it.

    - ``retryable``: the same request to the same model may succeed later.
    - ``fallback``: another model may succeed where this one failed.
    - ``retry_after``: seconds the server asked us to wait, when it said.
    - ``reason``: a short human line (no secrets).

    Context overflow and bad requests never fall back; an abort is never retried.
    A frozen dataclass (not a pydantic model, so classifying an error never imports
    pydantic): derive a variant with :func:`dataclasses.replace`.
    """

    kind: ErrorKind
    retryable: bool = False
    fallback: bool = False
    retry_after: float | None = None
    reason: str = ""
    status: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"unknown error kind {self.kind!r}; known: {', '.join(_KINDS)}")
        if self.retry_after is not None and not self.retry_after >= 0:
            raise ValueError(f"retry_after must be >= 0 seconds, got {self.retry_after!r}")
        if self.kind in ("context_overflow", "bad_request") and self.fallback:
            raise ValueError(f"a {self.kind} error never falls back")
        if self.kind == "aborted" and (self.retryable or self.fallback):
            raise ValueError("an abort is never retried nor falls back")

    @classmethod
    def transient(
        cls, reason: str, *, status: int | None = None, retry_after: float | None = None
    ) -> ErrorClass:
        """A failure the same request may not meet again, another model may not either:
        what a server failing mid-answer, with nothing more conclusive said, is."""
        return cls(
            kind="transient",
            retryable=True,
            fallback=True,
            retry_after=retry_after,
            status=status,
            reason=reason,
        )


class ModelplugError(Exception):
    """Base of every modelplug exception. The message is redacted of known secrets."""

    # Its message is redacted when made, so secrets.clean_exception keeps it as it is
    # (the mark secrets' own stand-ins carry).
    _modelplug_redacted = True

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))

    @property
    def message(self) -> str:
        """The error's message, redacted of known secrets."""
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt without calling __init__ (subclasses take other arguments), from the
        # redacted message and the attributes; chained causes are not pickled.
        return (_rebuild, (type(self), self.args, dict(vars(self))))


def _rebuild(
    kind: type[ModelplugError], args: tuple[Any, ...], state: dict[str, Any]
) -> ModelplugError:
    error = kind.__new__(kind)
    error.args = args
    vars(error).update(state)
    return error


class ConfigError(ModelplugError):
    """A settings file or value is wrong. The message names the file, line and key."""


class MissingKeyError(ModelplugError):
    """A provider needs a key that is not set."""

    def __init__(self, variable: str, provider: str) -> None:
        self.variable = variable
        self.provider = provider
        super().__init__(f"Set {variable} to use the provider {provider}.")


class NoKeyBudgetError(ModelplugError):
    """The endpoint exposes no key budget modelplug knows how to read (no LiteLLM
    ``/key/info``, no OpenRouter ``/api/v1/key``, no gateway ``/key/info``). A fact
    about the endpoint, remembered for the client's life; not a failure to reach it."""

    def __init__(self, route: str, base_url: str | None) -> None:
        self.route = route
        self.base_url = base_url
        where = f" at {base_url}" if base_url else ""
        super().__init__(
            f"the endpoint of {route}{where} exposes no key budget (it has no LiteLLM "
            "/key/info, no OpenRouter /api/v1/key and no modelplug gateway /key/info)"
        )


class UnknownProviderError(ModelplugError):
    """No enabled plugin serves the provider a spec names. ``hint`` says what to do:
    which setting switched the serving plugin off, or which distribution to install."""

    def __init__(
        self,
        spec: str,
        provider: str | None,
        installed: list[str],
        note: str | None = None,
        hint: str | None = None,
        types: list[str] | None = None,
    ) -> None:
        self.spec = spec
        self.provider = provider
        self.installed = installed
        self.hint = hint
        self.types = types
        listing = ", ".join(installed) or "none"
        if note and types is not None:
            # A type no plugin serves is a typo or a missing plugin: the types that do
            # exist say which, where provider names would not.
            message = (
                f"Cannot resolve {spec!r}: {note}. Types the enabled plugins serve: "
                f"{', '.join(types) or 'none'}. Set one of them as the type, or install or "
                "enable the plugin for that type (see `modelplug plugins`)."
            )
        elif note:
            message = (
                f"Cannot resolve {spec!r}: {note}. Installed providers: {listing}. "
                "Install or enable the plugin for that type (see `modelplug plugins`)."
            )
        elif provider:
            message = f"Unknown provider {provider!r} in {spec!r}. " + (
                hint
                or f"Installed providers: {listing}. No known plugin serves it: define it "
                "in your user settings file under [providers], or install its plugin."
            )
        else:
            message = (
                f"No plugin resolves the model {spec!r}. Name it as provider/model (a bare "
                "model id finds its provider only in the claude-*, gemini-* and OpenAI "
                f"families: gpt-*, o1, o3-mini, ...); installed providers: {listing}."
            )
        super().__init__(message)


class NoProviderError(ModelplugError):
    """A route resolved but no plugin opened a stream for it."""


class RequestError(ModelplugError, ValueError):
    """A request is invalid; raised before any network call."""


class PluginLoadError(ModelplugError):
    """A plugin failed to import or to validate (fatal only with MODELPLUG_STRICT_PLUGINS=1)."""


class PluginLockError(PluginLoadError):
    """An installed plugin differs from the plugin lock (``[plugins] lock``) and
    ``lock_mode = "strict"`` is set: the program refuses to start. ``distributions``
    names each distribution that differs, is not in the lock or was removed since."""

    def __init__(self, message: str, distributions: list[str]) -> None:
        super().__init__(message)
        self.distributions = distributions


class PluginError(ModelplugError):
    """A plugin's hook implementation raised: a bug in that plugin, not a failure of
    the model or the provider. ``plugin`` and ``hook`` name it; ``__cause__`` is what it
    raised, as a redacted stand-in."""

    def __init__(self, plugin: str, hook: str, error: BaseException) -> None:
        self.plugin = plugin
        self.hook = hook
        super().__init__(
            f"the plugin {plugin!r} failed in {hook}: {type(error).__name__}: {error} "
            f"(a bug in that plugin; `modelplug plugins` shows where it comes from, and "
            f"disable = [{plugin!r}] under [plugins] turns it off)"
        )


class TextCallError(ModelplugError, ValueError):
    """A text-tool-call reader met input it cannot handle (a bad mode, say)."""


class OutputValidationError(ModelplugError):
    """A structured answer is not JSON or does not fit the schema (after every re-ask).

    ``raw`` is the answer as the model wrote it, ``errors`` what is wrong with it (one
    line each, with the path), ``response`` the last Response (usage, model), and
    ``attempts`` how many answers were asked for.
    """

    def __init__(
        self, problem: str, *, raw: str, errors: list[str], response: Response | None = None
    ) -> None:
        self.raw = raw
        self.errors = errors
        self.response = response
        self.attempts = 1
        #: what would make the model answer as asked, when known (another mode).
        self.hint: str | None = None
        shown = "; ".join(errors[:5]) + (
            f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        )
        super().__init__(f"{problem}: {shown}")

    def add_hint(self, hint: str) -> None:
        """End the message with what to do about it (and keep it as :attr:`hint`)."""
        self.hint = hint
        self.args = (redact(f"{self.message}. {hint}"),)


class OutputTruncatedError(OutputValidationError):
    """A structured answer was cut at max_tokens inside its JSON: never repaired into an
    object. Raise ``max_tokens`` and ask again."""

    def __init__(self, raw: str, response: Response | None = None) -> None:
        super().__init__(
            "the answer was cut at max_tokens inside its JSON (raise max_tokens)",
            raw=raw,
            errors=["truncated at max_tokens"],
            response=response,
        )


class ScriptExhaustedError(ModelplugError):
    """The fake model was asked for more responses than its script holds."""


class ModelError(ModelplugError):
    """A call to a model failed.

    ``error_class`` says what kind of failure it was; ``route`` is where it went (no key
    in it); ``partial`` is the output already produced, as a Response, when any was;
    ``__cause__`` is the original error as a redacted stand-in (an instance of a
    subclass of its type, with its redacted message and status code only: see
    :func:`modelplug.contract.secrets.clean_exception`) once the error leaves the client.
    """

    def __init__(
        self,
        message: str,
        *,
        error_class: ErrorClass,
        route: Route | None = None,
        partial: Response | None = None,
    ) -> None:
        self.error_class = error_class
        self.route = route
        self.partial = partial
        where = f" [{route.name}]" if route is not None else ""
        super().__init__(f"{message}{where}")

    @property
    def kind(self) -> ErrorKind:
        """The kind of failure (``error_class.kind``)."""
        return self.error_class.kind

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed if sent again (``error_class.retryable``)."""
        return self.error_class.retryable


@dataclass(frozen=True)
class CutToolCall:
    """One tool call the output limit cut: its id and name, and its ``arguments`` as
    far as the model wrote them (not JSON: the text broke off)."""

    id: str | None
    name: str | None
    arguments: str


class TruncatedToolCallError(ModelError):
    """The answer ended (max_tokens, or a full context window) inside a tool call's
    arguments, so no call of it may be run: half its arguments would be.

    Not retryable and no fallback: the same request meets the same limit again (at
    temperature 0, byte for byte). Raise ``max_tokens``, or shrink the conversation or
    the call asked for. Nothing the model wrote is lost: ``partial`` is the whole
    Response as it ended (text, thinking, any whole calls before the cut, usage, cost,
    ``stop_reason``, ``metadata["truncated_tool_calls"]``), ``calls`` the cut calls
    with their arguments so far; ``tool_name`` and ``arguments`` are the first's.
    """

    def __init__(
        self, message: str, *, calls: list[CutToolCall], route: Route | None, partial: Response
    ) -> None:
        self.calls = calls
        super().__init__(
            message,
            error_class=ErrorClass(kind="other", reason="tool call cut by the output limit"),
            route=route,
            partial=partial,
        )

    @property
    def tool_name(self) -> str | None:
        """The name of the (first) cut call."""
        return self.calls[0].name if self.calls else None

    @property
    def arguments(self) -> str:
        """The arguments text of the (first) cut call, as far as it was written."""
        return self.calls[0].arguments if self.calls else ""


def describe_error(error: BaseException, error_class: ErrorClass) -> str:
    """One line for a failure: the class's reason and the error's own words."""
    reason = error_class.reason or type(error).__name__
    detail = str(error).strip()
    message = f"{reason}: {detail}" if detail and detail != reason else reason
    # Redacted before it is cut: a cut through a key would leave a piece too short to
    # be recognised as one.
    return redact(message)[:2000]


CONTEXT_PHRASES = (
    "prompt is too long",
    "context length",
    "context_length_exceeded",
    "maximum context length",
    "exceeds the available context size",
    "context window",
    "too many tokens",
    "input is too long",
    "reduce the length",
)
# A server's words for a request it cannot serve at all (llama-server without
# --embeddings, a model without tools): asked again, it answers the same.
_NOT_SUPPORTED_PHRASES = ("not supported", "does not support", "unsupported", "not implemented")


def class_for_status(
    status: int | None,
    *,
    error_type: str | None = None,
    text: str = "",
    retry_after: float | None = None,
) -> ErrorClass | None:
    """The ErrorClass for an HTTP status, a vendor error ``type`` and the server's
    message, as every provider reports them; None when they say nothing conclusive.

    Provider plugins call it and adjust the reason; core's generic classifier uses it
    before looking at connection errors.
    """
    lowered = text.lower()
    if status is not None and 300 <= status < 400:
        # Redirects are not followed: a base URL that redirects is a setting to fix.
        return ErrorClass(
            kind="other", fallback=True, status=status, reason=f"redirected ({status})"
        )
    if status in (None, 400, 413, 422) and any(p in lowered for p in CONTEXT_PHRASES):
        return ErrorClass(
            kind="context_overflow",
            status=status,
            reason="the prompt is longer than the model's context window",
        )
    if status == 402 or error_type in ("insufficient_quota", "billing_error"):
        # Before 429: OpenAI reports an exhausted quota as a 429 that no wait will fix.
        return ErrorClass(kind="quota", fallback=True, status=status, reason="quota exhausted")
    if status == 429 or error_type in ("rate_limit_error", "rate_limit_exceeded"):
        return ErrorClass(
            kind="rate_limit",
            retryable=True,
            fallback=True,
            retry_after=retry_after,
            status=status,
            reason="rate limited",
        )
    if status == 529 or error_type == "overloaded_error":
        return ErrorClass(
            kind="overloaded",
            retryable=True,
            fallback=True,
            retry_after=retry_after,
            status=status,
            reason="the provider is overloaded",
        )
    if _not_supported(status, error_type, lowered):
        # Never retried; no fallback either: a fallback would also cool the route down
        # for the calls it can serve. The server's message says what to change.
        return ErrorClass(
            kind="bad_request",
            status=status,
            reason=f"not supported by the server ({status})" if status else "not supported",
        )
    if (status is not None and status >= 500) or error_type == "api_error":
        return ErrorClass(
            kind="transient",
            retryable=True,
            fallback=True,
            retry_after=retry_after,
            status=status,
            reason=f"server error {status}" if status else "server error",
        )
    if status in (408, 409):
        return ErrorClass(
            kind="transient",
            retryable=True,
            fallback=status == 408,
            retry_after=retry_after,
            status=status,
            reason="request timeout" if status == 408 else "conflict",
        )
    if status == 401 or error_type == "authentication_error":
        return ErrorClass(kind="auth", fallback=True, status=status, reason="authentication failed")
    if status == 403 or error_type == "permission_error":
        return ErrorClass(kind="auth", fallback=True, status=status, reason="permission denied")
    if status == 404 or error_type == "not_found_error":
        return ErrorClass(kind="not_found", fallback=True, status=status, reason="model not found")
    if status == 413 or error_type == "request_too_large":
        return ErrorClass(kind="context_overflow", status=status, reason="request too large")
    if "content_filter" in lowered or "content policy" in lowered or "content_policy" in lowered:
        return ErrorClass(
            kind="content_filter", status=status, reason="blocked by a content filter"
        )
    if status is not None and 400 <= status < 500:
        return ErrorClass(kind="bad_request", status=status, reason=f"bad request ({status})")
    return None


def _not_supported(status: int | None, error_type: str | None, lowered: str) -> bool:
    """Whether the server said it cannot do this at all: a 501 (Not Implemented), a
    ``not_supported_error``, or those words in an error that has no status (an error
    event mid-stream). A 4xx with those words is a bad request already; a 5xx other
    than 501 may be a passing failure that happens to use them."""
    if status == 501 or error_type == "not_supported_error":
        return True
    return status is None and any(p in lowered for p in _NOT_SUPPORTED_PHRASES)
