"""This plugin's errors, each born with its ErrorClass.

Bedrock names its error in the ``x-amzn-errortype`` header
(``ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/``) and says
why in a ``{"message": ...}`` body; inside a stream an exception event carries the same
name in ``:exception-type`` and the same body. Both are read by one table here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from modelplug import ErrorClass, ModelError, Route, class_for_status, retry_after_from_headers
from modelplug_kit import StatusError, WireErrors, error_body, error_message

if TYPE_CHECKING:
    from modelplug import Response

__all__ = ["ERRORS", "SECTION", "BedrockError", "BedrockErrors", "BedrockStatusError"]

SECTION = "bedrock"
ACCESS_HINT = (
    "enable access to {model} for this account in the Bedrock console (Model access), "
    "or check that the id or inference profile exists in region {region}"
)
# A model that Bedrock serves only through an inference profile says so in these words.
PROFILE_HINT = (
    "this model is served through an inference profile: call bedrock/us.{model} (or the "
    "eu., apac., global. profile of your region)"
)


class BedrockError(ModelError):
    """Any failure of a call to Bedrock."""


class BedrockStatusError(StatusError, BedrockError):
    """Bedrock answered with an error status, or an exception event mid-stream
    (``status_code`` None); ``headers`` and ``body`` are kept, redacted. ``error_type``
    is Bedrock's name for it (``ThrottlingException``)."""

    error_type: str | None = None


def _class(name: str, status: int | None, message: str, retry_after: float | None) -> ErrorClass:
    """Bedrock's error names, then core's status table for what they leave open."""
    lowered = message.lower()
    if name == "AccessDeniedException" or name == "UnrecognizedClientException":
        return ErrorClass(kind="auth", fallback=True, status=status, reason="access denied")
    if name == "ResourceNotFoundException":
        return ErrorClass(kind="not_found", fallback=True, status=status, reason="no such model")
    if name == "ValidationException":
        if _too_long(lowered):
            return ErrorClass(kind="context_overflow", status=status, reason="input too long")
        if "inference profile" in lowered or ("access" in lowered and "model" in lowered):
            return ErrorClass(kind="not_found", fallback=True, status=status, reason="no access")
        return ErrorClass(kind="bad_request", status=status, reason="Bedrock refused the request")
    if name == "ThrottlingException":
        return ErrorClass(
            kind="rate_limit",
            retryable=True,
            fallback=True,
            status=status,
            retry_after=retry_after,
            reason="throttled",
        )
    if name == "ServiceQuotaExceededException":
        return ErrorClass(kind="quota", fallback=True, status=status, reason="quota exceeded")
    if name in ("ServiceUnavailableException", "ModelNotReadyException"):
        return ErrorClass(
            kind="overloaded",
            retryable=True,
            fallback=True,
            status=status,
            retry_after=retry_after,
            reason="the model is not ready" if "NotReady" in name else "service unavailable",
        )
    if name in ("InternalServerException", "ModelStreamErrorException", "ModelErrorException"):
        return ErrorClass.transient(f"Bedrock failed ({name})", status=status)
    if name == "ModelTimeoutException":
        return ErrorClass.transient("the model timed out", status=status)
    found = class_for_status(status, text=message, retry_after=retry_after)
    if found is None:
        found = ErrorClass.transient("Bedrock reported an error", status=status)
    return found


def _too_long(lowered: str) -> bool:
    """Bedrock's words for an input over the model's window ("Input is too long for
    requested model", "prompt is too long", "too many input tokens")."""
    if "too long" in lowered or ("too many" in lowered and "token" in lowered):
        return True
    return "context" in lowered and ("exceed" in lowered or "limit" in lowered)


def error_name(value: str | None) -> str:
    """``ThrottlingException:http://internal...`` -> ``ThrottlingException``; an
    exception event's member name (``throttlingException``) -> the same name."""
    name = (value or "").split(":", 1)[0].strip()
    return name[:1].upper() + name[1:]


class BedrockErrors(WireErrors):
    error = BedrockError
    status_error = BedrockStatusError

    def status(
        self, status: int, headers: Mapping[str, str], body: bytes, route: Route
    ) -> ModelError:
        data = error_body(body)  # redacted: a proxy may echo the key it refused
        lowered = {str(k).lower(): str(v) for k, v in headers.items()}
        name = error_name(lowered.get("x-amzn-errortype")) or _body_type(data)
        message = error_message(data)
        retry_after = retry_after_from_headers(headers)
        found = _class(name, status if status >= 300 else None, message, retry_after)
        if status < 300 and found.kind == "transient" and not name:
            found = ErrorClass(kind="other", fallback=True, status=status, reason="not a stream")
        words = self.wording(
            f"{route.provider} answered {status}",
            message,
            detail=name,
            hint=_hint(found, message, route),
            retry_after=retry_after,
        )
        error = self.make(words, found, route, status=status, headers=headers, body=data)
        if isinstance(error, BedrockStatusError):
            error.error_type = name or None
        return error

    def exception_event(
        self, route: Route, name: str, payload: bytes, partial: Response | None
    ) -> ModelError:
        """An exception event mid-stream (``:message-type exception``)."""
        data = error_body(payload)
        message = error_message(data)
        name = error_name(name)
        found = _class(name, None, message, None)
        words = self.wording(
            f"{route.provider} reported {name or 'an exception'} mid-stream",
            message,
            hint=_hint(found, message, route),
        )
        error = BedrockStatusError(
            words, status=None, error_class=found, route=route, body=data, partial=partial
        )
        error.error_type = name or None
        return error


def _body_type(data: Any) -> str:
    """Some proxies put the name in the body (``__type``, as AWS's JSON protocol does)."""
    if isinstance(data, dict):
        for key in ("__type", "code"):
            if isinstance(data.get(key), str):
                return error_name(data[key].rsplit("#", 1)[-1])
    return ""


def _hint(found: ErrorClass, message: str, route: Route) -> str:
    if found.kind == "not_found":
        if "inference profile" in message.lower():
            return PROFILE_HINT.format(model=route.model)
        region = route.endpoint.options.get("region") or "the configured region"
        return ACCESS_HINT.format(model=route.model, region=region)
    if found.kind == "auth":
        return (
            "check the AWS credentials modelplug found (AWS_PROFILE, ~/.aws/credentials, "
            "AWS_BEARER_TOKEN_BEDROCK) and that they allow bedrock:InvokeModelWithResponseStream"
        )
    return ""


ERRORS = BedrockErrors(SECTION)
