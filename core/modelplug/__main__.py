"""``python -m modelplug``: the ``modelplug`` command."""

from modelplug.cli import main

raise SystemExit(main())
