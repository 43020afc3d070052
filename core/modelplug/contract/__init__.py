"""The contract: what core and every plugin agree on, and nothing that runs a call.

The neutral types (:mod:`~modelplug.contract.types`), the routes and their records
(:mod:`~modelplug.contract.routes`, :mod:`~modelplug.contract.records`), the hook specs
(:mod:`~modelplug.contract.hookspecs`) and what a hook sees of its caller
(:mod:`~modelplug.contract.context`), the errors and their classification
(:mod:`~modelplug.contract.errors`), the merged settings a hook reads
(:mod:`~modelplug.contract.settings`), secrets and their redaction
(:mod:`~modelplug.contract.secrets`), and the helpers over neutral types that both
sides use (token estimates, loose JSON, replay, text tool calls). No vendor's wire shape
and no import from the host, the client or the CLI (docs/architecture.md).
"""
