"""``python -m modelplug``: the ``modelplug`` command."""

from .cli import main

raise SystemExit(main())
