"""The client: the Client and one call's run.

:class:`~modelplug.client.client.Client` resolves a spec and runs a call through the
hooks (:mod:`~modelplug.client.calls`, :mod:`~modelplug.client.embed_call`), hands a
stream between policies (:mod:`~modelplug.client.splice`), checks structured output
(:mod:`~modelplug.client.structured`) and reads a caller's conversation
(:mod:`~modelplug.client.conversation`). Imports the host and the contract; nothing
here imports the Client back (the modules of a call see it as
:class:`~modelplug.client.surface.ClientSurface`).
"""
