"""The plugin host: which plugins run and with what settings.

Discovery through entry points, toggles and trust (:mod:`~modelplug.host.plugins`),
where settings come from (:mod:`~modelplug.host.settings`), a plugin's own table read
into a typed record (:mod:`~modelplug.host.options`), the ``[http]`` table
(:mod:`~modelplug.host.http_options`), the providers known by name and the user's
``[providers.NAME]`` tables. Imports the contract only.
"""
