"""A provider plugin's side of the user's ``[providers.NAME]`` tables.

A provider type's plugin declares the names it serves (its built-in ones and the user's
providers of its type), builds the Endpoint of a user's provider with core's checks
applied once, and reads the keys its type takes beyond core's (``region``), typed::

    def modelplug_providers(settings):
        return declared_providers(settings, "acme", builtin=["acme"], options=AcmeTable)

    def modelplug_resolve(spec, settings, provider_type):
        endpoint = user_endpoint(settings, name, "acme", builtin=name == "acme",
                                 base_url="https://api.acme.dev/v1", api_key_env="ACME_API_KEY")

A user's provider on this machine needs no key and is free (``Endpoint.local``; core
prices a local route at zero unless the user's ``[models]`` price says otherwise): the
rule is :func:`user_endpoint`'s, the same for every type.

Nothing here imports anything heavy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from modelplug.contract.errors import ConfigError
from modelplug.contract.records import TableError, field_names, from_table
from modelplug.contract.routes import Endpoint, Provider
from modelplug.contract.settings import (
    PROVIDER_KEYS,
    ProviderSettings,
    check_base_url,
    is_loopback_url,
    warn,
)

if TYPE_CHECKING:
    from modelplug.contract.settings import Settings

__all__ = ["check_provider_table", "declared_providers", "provider_options", "user_endpoint"]

R = TypeVar("R")


def declared_providers(
    settings: Settings,
    provider_type: str,
    builtin: Iterable[str] = (),
    *,
    native: bool = False,
    example: str | None = None,
    options: type | None = None,
) -> list[Provider]:
    """What ``modelplug_providers`` returns for one type: the ``builtin`` names and the
    user's providers of ``provider_type``, less the built-in names the user's file gave
    another type (the user's table replaces a built-in of the same name)."""
    names = set(builtin)
    names.update(n for n, p in settings.providers.items() if p.type == provider_type)
    names.difference_update(n for n, p in settings.providers.items() if p.type != provider_type)
    return [
        Provider(name=n, type=provider_type, native=native, example=example, options=options)
        for n in sorted(names)
    ]


def user_endpoint(
    settings: Settings,
    provider: str,
    provider_type: str,
    *,
    builtin: bool = False,
    base_url: str | None = None,
    needs_base_url: bool = True,
    api_key_env: str | None = None,
    local: bool | None = None,
    server: str | None = None,
    servers: Iterable[str] | None = None,
    options: type | None = None,
) -> Endpoint | None:
    """The Endpoint of the user's ``[providers.NAME]`` of ``provider_type``, or of the
    built-in ``provider`` (None when neither: no table of that name, or one of another
    type).

    A server on this machine needs no key and costs nothing: when the table names no
    key variable and the server is local (``local = true`` in the table, else the
    ``local`` given here, else a loopback base URL), ``api_key_env`` does not apply, and
    the Endpoint is ``local`` unless a key was named for a server only its address
    made local (a keyed loopback server is likely a proxy to a paid API). ``api_key_env
    = ""`` in a table means "no key" anywhere.

    :param builtin: ``provider`` is one of the type's own names (its ``modelplug_providers``
        declares it): without a table it gets the defaults below.
    :param base_url: the type's default base URL, for a table without one.
    :param needs_base_url: False: without a base URL the plugin decides where to send
        (Endpoint.base_url None), as for an API whose host depends on other settings.
    :param api_key_env: the type's default key variable, for a table that names none.
    :param local: whether a server of this type runs on this machine: True (a local
        preset), False (never by its address: its credentials are the cloud's own), None
        (a loopback base URL says so).
    :param server: the server kind when the table names none.
    :param servers: the ``server = "..."`` values the type knows (None: any).
    :param options: the dataclass of the type's own keys; read into ``Endpoint.options``.
    :raises ConfigError: no base URL when one is needed, or a ``server`` the type does
        not know.
    """
    user = settings.providers.get(provider)
    if user is None and builtin:
        user = ProviderSettings(type=provider_type)  # no table: the type's defaults
    if user is None or user.type != provider_type:
        return None
    url = user.base_url or base_url
    if url:
        url = check_base_url(url, allow_insecure_http=user.allow_insecure_http, provider=provider)
    elif needs_base_url:
        raise ConfigError(
            f"the provider {provider!r} in your settings has type {provider_type!r} but no "
            f'base_url; add base_url = "https://host/v1" under [providers.{provider}]'
        )
    on_this_machine = _first_said(user.local, local, bool(url) and is_loopback_url(url or ""))
    if user.api_key_env is not None or "api_key_env" in user.given:
        key_env = user.api_key_env
    else:
        key_env = None if on_this_machine else api_key_env
    kind = user.server or server
    known = None if servers is None else tuple(servers)
    if user.server is not None and known is not None and user.server not in known:
        raise ConfigError(
            f"[providers.{provider}] server = {user.server!r} is not a server the "
            f"{provider_type!r} type knows; use one of {', '.join(known)} (or leave it out)"
        )
    read = provider_options(settings, provider, options) if options is not None else None
    return Endpoint(
        type=provider_type,
        base_url=url or None,
        api_key_env=key_env or None,
        headers=dict(user.headers),
        allow_insecure_http=user.allow_insecure_http,
        local=on_this_machine and (user.local is True or local is True or not key_env),
        server=kind,
        options={} if read is None else dataclasses.asdict(read),
    )


def _first_said(*answers: bool | None) -> bool:
    return next(a for a in answers if a is not None)


def provider_options(settings: Settings, provider: str, record: type[R]) -> R:
    """The keys of the user's ``[providers.NAME]`` beyond core's, as ``record`` (a
    dataclass whose fields are the keys and their defaults).

    :raises ConfigError: a value has the wrong kind, naming ``[providers.NAME] key``.
    """
    user = settings.providers.get(provider)
    extra = {} if user is None else user.extra
    known = set(field_names(record))
    try:
        return from_table(
            record, {k: v for k, v in extra.items() if k in known}, f"providers.{provider}"
        )
    except TableError as exc:
        key = exc.key.removeprefix(f"providers.{provider}.")
        raise ConfigError(f"[providers.{provider}] {key}: {exc.problem}") from None


def check_provider_table(settings: Settings, provider: str, declared: Provider | None) -> None:
    """Core's check when ``provider`` resolves: keys of the user's table that neither
    core nor the serving declaration knows are a warning (a typo must not be silent);
    a wrong value of a declared key is a ConfigError."""
    user = settings.providers.get(provider)
    if user is None or not user.extra:
        return
    record = declared.options if declared is not None else None
    own: list[str] = field_names(record) if record is not None else []
    unknown = sorted(k for k in user.extra if k not in own)
    if unknown:
        known = ", ".join([*sorted(PROVIDER_KEYS), *own])
        warn(
            f"[providers.{provider}] has unknown key(s) {', '.join(unknown)} for type "
            f"{user.type!r} (known: {known})",
            stacklevel=4,
        )
    if record is not None:
        provider_options(settings, provider, record)
