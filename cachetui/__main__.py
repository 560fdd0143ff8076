"""`python -m cachetui`."""

from cachetui.cli import main

raise SystemExit(main())
