"""The AWS credentials that sign a request, and the signature: both botocore's.

botocore is imported here, on the first signed request, never by ``import modelplug``,
``Client()`` or ``resolve()``. Its resolver is the chain every AWS tool follows:
environment, the shared config and credentials files and their profiles, SSO,
``credential_process``, container and instance roles. What it gives may expire
(assumed roles, SSO, instance roles); each request asks it for a frozen set, which
refreshes the set first when it is about to expire. The request is signed by botocore's
``SigV4Auth``, the signer every AWS SDK for Python uses.

Finding them may block (an instance role asks the metadata service; a refresh may call
STS or SSO), and botocore's import takes a moment, so that work runs in a thread, never
on the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from modelplug import ErrorClass, register_secret

from .errors import BedrockError

if TYPE_CHECKING:
    from modelplug import Route, Settings

__all__ = ["SERVICE", "Frozen", "clear", "frozen_credentials", "signed_headers"]

SERVICE = "bedrock"

ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")

_lock = threading.Lock()
# One resolved credentials object per profile, kept for the process: it refreshes itself.
_found: dict[str | None, Any] = {}


@dataclass(frozen=True, slots=True)
class Frozen:
    access_key: str
    secret_key: str
    token: str | None

    def __repr__(self) -> str:
        return f"Frozen(access_key={self.access_key[:4]}***)"


def clear() -> None:
    """Forget what was resolved (a test that changes the environment)."""
    with _lock:
        _found.clear()


async def frozen_credentials(settings: Settings, profile: str | None, route: Route) -> Frozen:
    """This request's credentials. The user's environment as modelplug reads it
    (``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY``) comes first, as in AWS's
    chain; then botocore's chain for ``profile`` (None: AWS_PROFILE or the default)."""
    access, secret, token = (settings.getenv(name) for name in ENV)
    if access and secret and not profile:
        return _frozen(access, secret, token)
    found = _found.get(profile)
    if found is None or _needs_refresh(found):
        got = await asyncio.to_thread(_resolve, profile, route)
    else:
        got = found.get_frozen_credentials()
    return _frozen(got.access_key, got.secret_key, got.token)


def _frozen(access: str, secret: str, token: str | None) -> Frozen:
    register_secret(secret)
    register_secret(token)
    return Frozen(access, secret, token or None)


def _needs_refresh(found: Any) -> bool:
    check = getattr(found, "refresh_needed", None)
    return bool(check()) if check is not None else False


def _resolve(profile: str | None, route: Route) -> Any:
    """Run in a thread: botocore's chain, and a refresh when one is due; the frozen set
    it gave."""
    # botocore ships no type information; what is used of it is three calls.
    import botocore.exceptions  # type: ignore[import-untyped]
    import botocore.session  # type: ignore[import-untyped]

    with _lock:
        found = _found.get(profile)
        try:
            if found is None:
                found = botocore.session.Session(profile=profile).get_credentials()
                if found is None:
                    raise _none_found(profile, route)
                _found[profile] = found
            got = found.get_frozen_credentials()  # refreshes now, off the event loop
        except botocore.exceptions.BotoCoreError as exc:
            raise BedrockError(
                f"{route.provider}: the AWS credentials could not be loaded: {type(exc).__name__}",
                error_class=ErrorClass(kind="auth", fallback=True, reason="no credentials"),
                route=route,
            ) from None
    return got


def _none_found(profile: str | None, route: Route) -> BedrockError:
    where = f"the AWS profile {profile!r}" if profile else "the standard AWS chain"
    return BedrockError(
        f"{route.provider}: no AWS credentials found in {where} (environment, "
        "~/.aws/credentials and ~/.aws/config, SSO, container or instance role). Run "
        "`aws configure` or `aws sso login`, set AWS_PROFILE, or set a Bedrock API key "
        "in AWS_BEARER_TOKEN_BEDROCK",
        error_class=ErrorClass(kind="auth", fallback=True, reason="no credentials"),
        route=route,
    )


class _Signing(NamedTuple):
    """The three public botocore classes a signature needs."""

    signer: Any  # botocore.auth.SigV4Auth
    request: Any  # botocore.awsrequest.AWSRequest
    credentials: Any  # botocore.credentials.Credentials


@functools.cache
def _signing() -> _Signing:
    # botocore ships no type information.
    from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
    from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
    from botocore.credentials import Credentials  # type: ignore[import-untyped]

    return _Signing(SigV4Auth, AWSRequest, Credentials)


async def signed_headers(
    url: str, headers: Mapping[str, str], body: bytes, found: Frozen, region: str
) -> dict[str, str]:
    """``headers`` of a ``POST`` to ``url`` with what botocore's ``SigV4Auth`` adds to
    sign them: ``x-amz-date``, ``x-amz-security-token`` (temporary credentials) and
    ``authorization``. The host it signs is the URL's, as httpx2 sends it."""
    if _signing.cache_info().currsize == 0:
        await asyncio.to_thread(_signing)  # the first import, off the event loop
    botocore = _signing()
    request = botocore.request(method="POST", url=url, data=body, headers=dict(headers))
    credentials = botocore.credentials(found.access_key, found.secret_key, found.token)
    botocore.signer(credentials, SERVICE, region).add_auth(request)
    return {name.lower(): value for name, value in request.headers.items()}
