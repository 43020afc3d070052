"""When a file was uploaded to the package index pip uses (PEP 700's ``upload-time`` on a
PEP 691 JSON project page), for ``modelplug install --min-age``.

The index is the one pip is configured with: ``PIP_INDEX_URL`` and
``PIP_EXTRA_INDEX_URL``, else what ``pip config list`` shows (``index-url``,
``extra-index-url``), else pip's own default, as ``pip install --help`` states it. The page
is fetched with the standard library (core has no HTTP client dependency; it honours
the same proxy variables), with any user and password of the URL sent as basic auth and
never printed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime
from urllib.parse import urlsplit, urlunsplit

from modelplug.contract.secrets import redact, register_secret

__all__ = ["index_urls", "public_url", "upload_time"]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
TIMEOUT = 30.0


def index_urls(pip: list[str], environ: dict[str, str] | None = None) -> list[str]:
    """The index URLs pip would look in, main index first."""
    env = os.environ if environ is None else environ
    main = env.get("PIP_INDEX_URL", "").strip()
    extra = env.get("PIP_EXTRA_INDEX_URL", "").split()
    if not main or not extra:
        configured = _pip_config(pip)
        main = main or configured.get("index-url", "")
        extra = extra or configured.get("extra-index-url", "").split()
    if not main:
        main = _pip_default_index(pip)
    return [u for u in [main, *extra] if u]


def _pip_config(pip: list[str]) -> dict[str, str]:
    """``pip config list``'s index settings (``global.index-url='...'``), the install
    section winning over global."""
    out = _run([*pip, "config", "list"])
    found: dict[str, str] = {}
    for section in ("global", "install"):
        for line in out.splitlines():
            match = re.match(rf"{section}\.(index-url|extra-index-url)='(.*)'$", line.strip())
            if match:
                found[match.group(1)] = match.group(2)
    return found


def _pip_default_index(pip: list[str]) -> str:
    """pip's default index, as its own help text names it."""
    text = " ".join(_run([*pip, "install", "--help"]).split())
    match = re.search(r"Package Index \(default (\S+?)\)", text)
    return match.group(1) if match else ""


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def public_url(url: str) -> str:
    """The URL without its user and password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def upload_time(indexes: list[str], project: str, filename: str) -> datetime | None:
    """When ``filename`` of ``project`` was uploaded, from the first index whose PEP 691
    JSON page gives ``upload-time`` for it; None when none does."""
    for index in indexes:
        page = _project_page(index, project)
        if page is None:
            continue
        files = page.get("files")
        for entry in files if isinstance(files, list) else []:
            if isinstance(entry, dict) and entry.get("filename") == filename:
                stamp = entry.get("upload-time")
                if isinstance(stamp, str):
                    try:
                        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
                    except ValueError:
                        return None
    return None


def _project_page(index: str, project: str) -> dict[str, object] | None:
    import base64
    import urllib.error
    import urllib.request

    parts = urlsplit(index)
    headers = {"Accept": f"{JSON_TYPE}, text/html;q=0.01"}
    if parts.username or parts.password:
        credentials = f"{parts.username or ''}:{parts.password or ''}"
        register_secret(parts.password or credentials)
        headers["Authorization"] = "Basic " + base64.b64encode(credentials.encode()).decode()
    name = re.sub(r"[-_.]+", "-", project).lower()
    url = public_url(index).rstrip("/") + f"/{name}/"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            if not response.headers.get("Content-Type", "").startswith(JSON_TYPE):
                return None
            data = json.loads(response.read())
    except (OSError, ValueError, urllib.error.URLError) as exc:
        print(f"modelplug: warning: {redact(url)}: {redact(str(exc))}", file=sys.stderr)
        return None
    return data if isinstance(data, dict) else None
