"""``python -m modelplug.cli``."""

from . import main

raise SystemExit(main())
