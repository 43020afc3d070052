"""Where settings come from: the user file, the project file, the environment and explicit
arguments (the :class:`~modelplug.contract.settings.Settings` they make is in the contract).

Later wins: user, project, environment, explicit. Only the user's own file may define
providers, base URLs, headers and key variables; a project file that tries is warned
about by key and ignored there, so a cloned repository can never redirect a key to its
own server. Keys come from environment variables, or from a user-only credentials file.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from modelplug.contract.errors import ConfigError
from modelplug.contract.settings import (
    CORE_KEYS,
    PROJECT_MODEL_KEYS,
    REDIRECT_KEYS,
    TOGGLE_KEYS,
    Layer,
    Settings,
    warn,
    warn_settings,
)

__all__ = [
    "load_settings",
    "project_search_dirs",
    "user_config_path",
]


def user_config_path() -> Path:
    """The user's own settings file: MODELPLUG_CONFIG, or config.toml in the platform's
    config directory for modelplug."""
    explicit = os.environ.get("MODELPLUG_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("modelplug")) / "config.toml"


def _check_named_config(path: Path) -> None:
    """MODELPLUG_CONFIG naming a directory is an error; naming a file that does not
    exist yet is a warning (``modelplug trust`` creates it), never silence."""
    if path.is_dir():
        raise ConfigError(
            f"MODELPLUG_CONFIG names {path}, which is a directory; point it at a file "
            f"such as {path / 'config.toml'}"
        )
    if not path.exists():
        warn(
            f"MODELPLUG_CONFIG names {path}, which does not exist, so no user settings "
            "apply; create it or unset MODELPLUG_CONFIG",
            stacklevel=4,
        )


def _line_of(text: str, key: str) -> int | None:
    needle = key.split(".")[-1]
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith(needle) or stripped.startswith(f'"{needle}"'):
            return number
        if stripped.startswith("[") and stripped.rstrip("]").endswith(needle):
            return number
    return None


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read settings: {exc.strerror}") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def project_search_dirs(start: Path, home: Path | None = None) -> list[Path]:
    """The directories a project file is looked for in, nearest first: ``start`` and its
    parents up to the repository root (the first one holding ``.git``) or the user's
    home, whichever comes first. When neither is above ``start``, only ``start`` itself:
    a ``modelplug.toml`` in a shared directory such as /tmp must not become the project
    file of everything below it."""
    if home is None:
        try:
            home = Path.home().resolve()
        except (OSError, RuntimeError):
            home = None
    chain = [start, *start.parents]
    for index, directory in enumerate(chain):
        if directory == home or (directory / ".git").exists():
            return chain[: index + 1]
    return [start]


def _find_project_file(start: Path) -> tuple[Path, dict[str, Any], str] | None:
    for directory in project_search_dirs(start):
        candidate = directory / "modelplug.toml"
        if candidate.is_file():
            data, text = _read_toml(candidate)
            return candidate, data, text
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            data, text = _read_toml(pyproject)
            section = data.get("tool", {}).get("modelplug")
            if isinstance(section, dict):
                return pyproject, section, text
    return None


def _writable_by_others(path: Path) -> tuple[str, bool] | None:
    """Why others could change the file at ``path``, and whether that makes it unsafe
    to use (True: others can write it, or another user owns it) or only worth a
    warning (False: its group may write it, and others belong to that group); None when
    only you (or root) can change it. POSIX only."""
    if os.name != "posix":
        return None
    try:
        info = path.stat()
    except OSError:
        return None
    if info.st_mode & 0o002:
        return (
            f"its permissions ({stat.filemode(info.st_mode)}) let every user write it; "
            f"run chmod go-w {path}",
            True,
        )
    if info.st_uid not in (os.getuid(), 0):
        return "it is owned by another user", True
    if info.st_mode & 0o020 and _group_is_shared(info.st_gid):
        return (
            f"its permissions ({stat.filemode(info.st_mode)}) let its group write it; "
            f"run chmod g-w {path}",
            False,
        )
    return None


def _group_is_shared(gid: int) -> bool:
    """Whether users other than you may belong to the group ``gid``: not your own
    private group (your primary group, named like you, with no other members)."""
    try:
        import grp
        import pwd

        group = grp.getgrgid(gid)
        me = pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, OSError):
        return True
    others = [member for member in group.gr_mem if member != me]
    return not (gid == os.getgid() and group.gr_name == me and not others)


def _strip_redirects(data: Any, path: str, source: Path) -> Any:
    """Drop every traffic-redirecting key from project data, warning for each."""
    if not isinstance(data, dict):
        return data
    clean: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{path}.{key}" if path else key
        if key in REDIRECT_KEYS:
            warn_settings(
                f"{source}: ignored '{dotted}': only your user settings file may set base "
                "URLs, headers or key variables (a project must not redirect traffic)"
            )
            continue
        clean[key] = _strip_redirects(value, dotted, source)
    return clean


def _project_layer(path: Path, data: dict[str, Any]) -> Layer:
    data = dict(data)
    for key in ("providers", "trusted_projects"):
        if key in data:
            data.pop(key)
            what = "define providers" if key == "providers" else "trust projects"
            warn_settings(
                f"{path}: ignored '{key}': only your user settings file may {what} "
                "(a cloned repository must never redirect a key to its own server)"
            )
    models = data.get("models")
    if isinstance(models, dict):
        kept: dict[str, Any] = {}
        for spec, entry in models.items():
            if not isinstance(entry, dict):
                kept[spec] = entry
                continue
            allowed = {}
            for key, value in entry.items():
                if key in PROJECT_MODEL_KEYS:
                    allowed[key] = value
                else:
                    warn_settings(
                        f"{path}: ignored 'models.{spec}.{key}': a project file may set a "
                        "model's price, context_window and max_output_tokens only"
                    )
            kept[spec] = allowed
        data["models"] = kept
    data = _strip_redirects(data, "", path)
    return Layer("project file", path, data)


def _env_layer(environ: Mapping[str, str]) -> Layer:
    data: dict[str, Any] = {}
    if environ.get("MODELPLUG_MODEL"):
        data["model"] = environ["MODELPLUG_MODEL"]
    toggles: dict[str, Any] = {}
    if "MODELPLUG_PLUGINS" in environ:
        toggles["enable"] = _split_names(environ["MODELPLUG_PLUGINS"])
    if environ.get("MODELPLUG_DISABLE"):
        toggles["disable"] = _split_names(environ["MODELPLUG_DISABLE"])
    if environ.get("MODELPLUG_PLUGIN_LOCK"):
        toggles["lock"] = environ["MODELPLUG_PLUGIN_LOCK"]
    if toggles:
        data["plugins"] = toggles
    return Layer("environment", None, data)


def _split_names(value: str) -> list[str]:
    return [part.strip() for part in value.replace(" ", ",").split(",") if part.strip()]


def _check_unknown_keys(layer: Layer, text: str | None) -> None:
    for key, value in layer.data.items():
        if key in CORE_KEYS or isinstance(value, dict):
            continue
        line = _line_of(text, key) if text else None
        where = f"{layer.path}:{line}" if line else str(layer.path or layer.name)
        warn_settings(f"{where}: unknown key '{key}' (known keys: {', '.join(sorted(CORE_KEYS))})")
    plugins = layer.data.get("plugins")
    if isinstance(plugins, dict):
        for key in plugins:
            if key not in TOGGLE_KEYS:
                warn_settings(
                    f"{layer.path or layer.name}: unknown key 'plugins.{key}' "
                    f"(known: {', '.join(sorted(TOGGLE_KEYS))})"
                )


def load_settings(
    *,
    user_path: Path | str | None = None,
    project_dir: Path | str | None = None,
    environ: Mapping[str, str] | None = None,
    explicit: Mapping[str, Any] | None = None,
    use_project: bool = True,
) -> Settings:
    """Read and merge the settings layers.

    :param user_path: the user's settings file (default: :func:`user_config_path`).
    :param project_dir: where to start looking for the project file (default: cwd).
    :param environ: the environment to read (default: ``os.environ``).
    :param explicit: settings given in code; they win over everything.
    :param use_project: False ignores project files entirely.
    """
    env = environ if environ is not None else os.environ
    user = Path(user_path).expanduser() if user_path is not None else None
    if user is None:
        explicit_path = env.get("MODELPLUG_CONFIG")
        user = Path(explicit_path).expanduser() if explicit_path else user_config_path()
        if explicit_path:
            _check_named_config(user)
    layers: list[Layer] = []
    # This file decides where keys are sent: one that others can change is not yours.
    exposure = _writable_by_others(user) if user.is_file() else None
    if exposure is not None and exposure[1]:
        warn_settings(f"{user}: ignored your user settings file: {exposure[0]}")
    elif exposure is not None:
        warn_settings(f"{user}: your user settings file is not yours alone: {exposure[0]}")
    if (exposure is None or not exposure[1]) and user.is_file():
        data, text = _read_toml(user)
        layer = Layer("user file", user, data)
        _check_unknown_keys(layer, text)
        layers.append(layer)
    found_dir: Path | None = None
    if use_project:
        start = Path(project_dir) if project_dir is not None else Path.cwd()
        found = _find_project_file(start.resolve())
        if found is not None:
            path, data, text = found
            found_dir = path.parent
            layer = _project_layer(path, data)
            _check_unknown_keys(layer, text)
            layers.append(layer)
    layers.append(_env_layer(env))
    if explicit:
        layers.append(Layer("explicit", None, dict(explicit)))
    return Settings(layers, user_path=user, project_dir=found_dir, environ=env)
