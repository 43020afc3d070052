"""AWS Signature Version 4 for one request, in the standard library.

Ours rather than botocore's signer: botocore's wants an ``AWSRequest`` built, copied and
prepared per call (and its import on the send path), while a signature is four HMACs
and one hash over strings this plugin already holds. The tests check every signature
against ``botocore.auth.SigV4Auth`` for fixed credentials and a frozen clock.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit

__all__ = ["SERVICE", "host_of", "sign"]

SERVICE = "bedrock"
ALGORITHM = "AWS4-HMAC-SHA256"
# Headers a proxy or the HTTP library may change on the way; botocore leaves them out.
UNSIGNED = frozenset({"authorization", "user-agent", "expect", "x-amzn-trace-id"})


def host_of(url: str) -> str:
    """The Host header of ``url`` as SigV4 signs it (no default port)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    default = {"https": ":443", "http": ":80"}.get(parts.scheme)
    if default and host.endswith(default):
        host = host[: -len(default)]
    return host


@lru_cache(maxsize=16)
def _signing_key(secret: str, day: str, region: str, service: str) -> bytes:
    key = _hmac(("AWS4" + secret).encode(), day)
    key = _hmac(key, region)
    key = _hmac(key, service)
    return _hmac(key, "aws4_request")


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def sign(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    access_key: str,
    secret_key: str,
    token: str | None,
    region: str,
    service: str = SERVICE,
    now: datetime | None = None,
) -> dict[str, str]:
    """``headers`` plus what signs them: ``host``, ``x-amz-date``,
    ``x-amz-security-token`` (temporary credentials) and ``authorization``."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = when.strftime("%Y%m%dT%H%M%SZ")
    day = stamp[:8]
    out = {k.lower(): v for k, v in headers.items()}
    out["host"] = host_of(url)
    out["x-amz-date"] = stamp
    if token:
        out["x-amz-security-token"] = token
    signed = sorted(k for k in out if k not in UNSIGNED)
    parts = urlsplit(url)
    canonical = "\n".join(
        [
            method.upper(),
            # The path is encoded once more: a model id's %3A is signed as %253A.
            quote(parts.path or "/", safe="/~"),
            _canonical_query(parts.query),
            "".join(f"{k}:{' '.join(out[k].split())}\n" for k in signed),
            ";".join(signed),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = f"{ALGORITHM}\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    signature = hmac.new(
        _signing_key(secret_key, day, region, service), to_sign.encode(), hashlib.sha256
    ).hexdigest()
    out["authorization"] = (
        f"{ALGORITHM} Credential={access_key}/{scope}, "
        f"SignedHeaders={';'.join(signed)}, Signature={signature}"
    )
    return out


def _canonical_query(query: str) -> str:
    if not query:
        return ""
    pairs = []
    for item in query.split("&"):
        key, _, value = item.partition("=")
        # Unlike the path, the query is signed encoded once.
        pairs.append((quote(unquote(key), safe="-_.~"), quote(unquote(value), safe="-_.~")))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))
