"""``python -m modelplug.cli``."""

from modelplug.cli import main

raise SystemExit(main())
