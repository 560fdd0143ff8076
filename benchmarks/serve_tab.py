"""How long a browser tab takes to open `cachetui serve` with data, the on-disk index warm.

    python benchmarks/serve_tab.py [SOURCE ...] [--runs 7]

Starts the installed `cachetui serve` (on a free port, with a private on-disk index), opens
one tab to warm the index, then for each run opens a new tab in headless Chromium and times
from the start of the navigation to the first frame whose status line shows the loaded
counts (read from xterm.js's buffer inside the page, as tests/e2e/test_serve.py does). It
closes the tab and waits --pause seconds before the next, as a colleague's tab comes a
while after the last (the server's spare app is started by then); `--pause 0`: tabs back
to back. Prints each run and the median.
No SOURCE: the bundled sample data. Needs chromium and chromium-driver.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser import Browser, Served  # noqa: E402 (tests/ on the path first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", metavar="SOURCE")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pause", type=float, default=5.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cachetui-serve-bench-") as scratch:
        # A private on-disk index and config: warmed here, not the user's.
        for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
            os.environ[name] = str(Path(scratch) / name.lower())
        served = Served(*[str(Path(s).absolute()) for s in options.sources], cwd=Path(scratch))
        browser = Browser()
        blank = browser.driver.current_window_handle  # kept open between runs
        try:
            times = []
            for run in range(options.runs + 1):
                browser.open(served.url, new_tab=True)
                seconds = browser.wait_for_counts(60)
                if run == 0:
                    print(f"first tab (builds the on-disk index): {seconds:.2f} s")
                else:
                    times.append(seconds)
                    print(f"tab with data, warm index: {seconds:.2f} s")
                browser.driver.close()  # its app ends
                browser.driver.switch_to.window(blank)
                time.sleep(options.pause)
            print(
                f"median of {len(times)}: {statistics.median(times):.2f} s "
                f"(min {min(times):.2f}, max {max(times):.2f})"
            )
        finally:
            browser.close()
            served.stop()
            served.kill()


if __name__ == "__main__":
    main()
