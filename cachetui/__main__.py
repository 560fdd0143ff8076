"""`python -m cachetui`."""

from cachetui.cli import main

# Guarded: loader processes are spawned, and they import the main module again.
if __name__ == "__main__":
    raise SystemExit(main())
