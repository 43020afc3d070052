"""The plugin host: which plugins run and with what settings.

Discovery through entry points, toggles and trust (:mod:`~modelplug.host.plugins`),
where settings come from (:mod:`~modelplug.host.settings`), a plugin's own table read
into a typed record (:mod:`~modelplug.host.options`), the ``[http]`` table
(:mod:`~modelplug.host.http_options`), the providers known by name and the user's
``[providers.NAME]`` tables; the plugin lock checked before a plugin is imported
(:mod:`~modelplug.host.plugin_lock`, with the files it hashes in
:mod:`~modelplug.host.plugin_files` and what was verified remembered by
:mod:`~modelplug.host.file_digests`). Imports the contract only.
"""
