"""Where a keystroke's time goes inside the app, beside the bare-Textual floor.

    python benchmarks/app_latency.py [--size 1m] [--words 6]

run.py times keystrokes from outside (tmux send-keys until capture-pane shows the result),
which includes tmux and the polling. This times them from inside: from the Key event to the
end of the terminal write that carries the result (for cachetui, the first write after the
new result was applied). Keys are sent 150 ms apart, so one never queues behind another.
Needs tmux; uses the corpus and the warm on-disk index run.py leaves (makes them if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Runs inside the app's process: wraps the driver's write and the app's key handling.
_PROBE = r"""
import atexit, json, sys, time
from textual import events
from textual.drivers import linux_driver
log = []
write = linux_driver.LinuxDriver.write
def timed_write(self, data):
    result = write(self, data)
    log.append((time.perf_counter(), "write"))
    return result
linux_driver.LinuxDriver.write = timed_write
def mark(kind):
    log.append((time.perf_counter(), kind))
log_path = sys.argv.pop(1)
atexit.register(lambda: open(log_path, "w").write(json.dumps(log)))
"""

_FLOOR = (
    _PROBE
    + r"""
sys.path.insert(0, sys.argv.pop(1))
import floor_app
class Probe(floor_app.Floor):
    async def on_event(self, event):
        if isinstance(event, events.Key):
            mark("key")
        return await super().on_event(event)
Probe().run()
"""
)

_CACHETUI = (
    _PROBE
    + r"""
from cachetui.tui.app import CacheTUI
from cachetui.tui.screens.main import MainScreen
apply = MainScreen._apply
def timed_apply(self, result):
    mark("applied")
    return apply(self, result)
MainScreen._apply = timed_apply
class Probe(CacheTUI):
    async def on_event(self, event):
        if isinstance(event, events.Key):
            mark("key")
        return await super().on_event(event)
Probe(sources=sys.argv[1:]).run()
"""
)


def latencies(log: list, after: str | None) -> list[float]:
    """ms from each key to the first write after it (and after `after`, when given)."""
    out, key, ready = [], None, after is None
    for at, kind in log:
        if kind == "key":
            key, ready = at, after is None
        elif kind == after and key is not None:
            ready = True
        elif kind == "write" and key is not None and ready:
            out.append((at - key) * 1000)
            key = None
    return out


def drive(
    program: str, args: list[str], keys: list[str], env: dict[str, str], settle: float
) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "log.json"
        script = Path(tmp) / "probe.py"
        script.write_text(program)
        socket = f"cachetui-latency-{os.getpid()}"
        command = " ".join([sys.executable, str(script), str(log_path), *args])
        tmux = ["tmux", "-L", socket]
        subprocess.run(
            [*tmux, "new-session", "-d", "-s", "p", "-x", "160", "-y", "48", command],
            env=env,
            check=True,
        )
        try:
            time.sleep(settle)
            for key in keys:
                subprocess.run([*tmux, "send-keys", "-t", "p", key], check=True)
                time.sleep(0.15)
            subprocess.run([*tmux, "send-keys", "-t", "p", "C-q"], check=True)
            deadline = time.time() + 10
            while not log_path.exists() and time.time() < deadline:
                time.sleep(0.1)
            return json.loads(log_path.read_text()) if log_path.exists() else []
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1m", choices=["100k", "1m"])
    parser.add_argument("--words", type=int, default=6)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    import run

    root = run.corpus(args.size)
    words = ["libxml", "pyth", "zlib", "mpich", "openssl", "boost", "hdf", "petsc"][: args.words]
    typing = [k for word in words for k in [*word, *["BSpace"] * len(word)]]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TERM": "xterm-256color", "XDG_CACHE_HOME": cache}
        subprocess.run(
            [run.CACHETUI, "stats", str(root), "--json"], env=env, capture_output=True
        )  # a warm index
        floor = latencies(drive(_FLOOR, [str(HERE)], typing, env, 2), None)[
            : len(typing)
        ]  # not the quit key's
        ours = latencies(
            drive(_CACHETUI, [str(root)], ["/", *typing], {**env, "TEXTUAL_FPS": "120"}, 6),
            "applied",
        )
    print(
        "key to the write of its result, inside the app "
        f"({len(floor)} and {len(ours)} keys, {args.size})"
    )
    print(
        f"  bare Textual floor   median {statistics.median(floor):6.1f} ms   max {max(floor):6.1f}"
    )
    print(f"  cachetui search      median {statistics.median(ours):6.1f} ms   max {max(ours):6.1f}")


if __name__ == "__main__":
    main()
