"""Real plugin wheels, a package index on 127.0.0.1 that serves them, and a throwaway
virtual environment to install them into: the ground the supply-chain tests stand on.

The wheels are written here as zip files with a correct ``RECORD`` (sha256 and size of
every file), ``WHEEL``, ``METADATA`` and ``entry_points.txt``: what pip checks when it
installs one. The index speaks the simple repository API twice: under ``/json/simple/``
PEP 691 JSON with PEP 700's ``upload-time`` for each file, under ``/html/simple/`` the
PEP 503 HTML page, which carries no upload time.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import sysconfig
import threading
import venv
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def _record_digest(data: bytes) -> str:
    raw = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def plugin_wheel(
    directory: Path,
    name: str,
    version: str,
    *,
    extra_files: dict[str, str] | None = None,
    module_source: str | None = None,
    entry_point_module: str | None = None,
) -> Path:
    """Write the wheel of a plugin distribution ``name`` (e.g. ``modelplug-clean``) whose
    entry point names its package ``modelplug_clean``; ``extra_files`` are added at the
    wheel's root (a ``.pth`` file, say); ``entry_point_module`` points the entry point
    elsewhere (at another distribution's module)."""
    package = name.replace("-", "_")
    dist_info = f"{package}-{version}.dist-info"
    files = {
        f"{package}/__init__.py": module_source
        or f'"""The test plugin {name}."""\n\nLOADED_FROM = __file__\n',
        f"{package}/data.txt": "a file the plugin ships\n",
        **(extra_files or {}),
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            "Summary: a plugin wheel made by modelplug's tests\n"
        ),
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: modelplug-tests\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
        f"{dist_info}/entry_points.txt": f"[modelplug]\n{name} = {entry_point_module or package}\n",
    }
    record = [
        f"{path},{_record_digest(text.encode())},{len(text.encode())}"
        for path, text in files.items()
    ]
    record.append(f"{dist_info}/RECORD,,")
    path = directory / f"{package}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in files.items():
            wheel.writestr(member, text)
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
    return path


class PluginIndex:
    """A simple-repository index on 127.0.0.1 serving the wheels in ``directory``.

    :param upload_times: a wheel's file name -> when it was uploaded (JSON pages only).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.upload_times: dict[str, datetime] = {}
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, flavour: str = "json") -> str:
        """The index URL pip is given: ``json`` (PEP 691 + 700) or ``html`` (PEP 503)."""
        return f"{self.root}/{flavour}/simple/"

    def start(self) -> PluginIndex:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _wheels(self, project: str) -> list[Path]:
        def normal(text: str) -> str:
            return re.sub(r"[-_.]+", "-", text).lower()

        return sorted(
            p
            for p in self.directory.glob("*.whl")
            if normal(p.name.split("-")[0]) == normal(project)
        )

    def _page(self, flavour: str, project: str) -> tuple[str, bytes]:
        wheels = self._wheels(project)
        if flavour == "json":
            files = []
            for wheel in wheels:
                entry: dict[str, object] = {
                    "filename": wheel.name,
                    "url": f"{self.root}/files/{wheel.name}",
                    "hashes": {"sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()},
                }
                uploaded = self.upload_times.get(wheel.name)
                if uploaded is not None:
                    entry["upload-time"] = (
                        uploaded.astimezone(UTC).isoformat().replace("+00:00", "Z")
                    )
                files.append(entry)
            body = {"meta": {"api-version": "1.1"}, "name": project, "files": files, "versions": []}
            return JSON_TYPE, json.dumps(body).encode()
        links = "".join(
            f'<a href="{self.root}/files/{w.name}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}">'
            f"{w.name}</a><br>\n"
            for w in wheels
        )
        return "text/html", f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.requests.append(self.path)
                parts = [p for p in self.path.split("?")[0].split("/") if p]
                if len(parts) == 3 and parts[1] == "simple" and parts[0] in ("json", "html"):
                    kind, body = index._page(parts[0], parts[2])
                elif (
                    len(parts) == 2
                    and parts[0] == "files"
                    and (index.directory / parts[1]).is_file()
                ):
                    kind, body = (
                        "application/octet-stream",
                        (index.directory / parts[1]).read_bytes(),
                    )
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@contextmanager
def serving(directory: Path) -> Iterator[PluginIndex]:
    index = PluginIndex(directory).start()
    try:
        yield index
    finally:
        index.stop()


def throwaway_venv(where: Path) -> Path:
    """A virtual environment with its own pip (ensurepip's bundled wheel: nothing
    downloaded; the environment tox makes has no pip to lend) that sees the development
    venv's packages, so modelplug runs in it and ``python -m pip`` installs into it. Its
    site-packages holds ``dev-packages.pth`` with the path lines (never an ``import``
    line) of the development environment: its site-packages and the source directories
    its editable installs add, which a path line alone would not reach (``.pth`` files
    are read only in site directories). Returns its python."""
    venv.create(where, with_pip=True, symlinks=True)
    python = where / "bin" / "python"
    site_dir = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    dev_site = Path(sysconfig.get_paths()["purelib"])
    lines = [str(dev_site)]
    for pth in sorted(dev_site.glob("*.pth")):
        for line in pth.read_text().splitlines():
            if line and not line.startswith(("import ", "import\t", "#")):
                lines.append(line)
    (site_dir / "dev-packages.pth").write_text("\n".join(lines) + "\n")
    return python


def run_modelplug(
    python: Path, *args: str, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``modelplug ARGS`` run by ``python`` in its own process."""
    return subprocess.run(
        [str(python), "-c", "import sys; from modelplug.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=180,
    )


def base_env(home: Path) -> dict[str, str]:
    """An environment with no user settings, a private data directory and pip told to
    stay off the network except the loopback index (set per test)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODELPLUG_", "PIP_"))}
    (home / "config.toml").touch()
    env.update(
        MODELPLUG_CONFIG=str(home / "config.toml"),
        MODELPLUG_DATA_DIR=str(home / "data"),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


__all__ = [
    "PluginIndex",
    "base_env",
    "plugin_wheel",
    "run_modelplug",
    "serving",
    "throwaway_venv",
]

if __name__ == "__main__":  # a manual look: python tests/plugin_index.py DIR
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    print(plugin_wheel(target, "modelplug-clean", "1.0"))
