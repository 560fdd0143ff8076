"""Benchmarks for cachetui at scale, whole processes; prints a table of figures.

    python benchmarks/run.py [--sizes 100k,1m] [--repeat 5] [--keys 24] [--tags 3]

For each corpus size (made by benchmarks/make_corpus.py when missing, in benchmarks/corpus-*):

- the floor of a cold load: listing the tree, reading every file and decoding its JSON
  (msgspec, generic) on one core with no other work, timed inside one process;
- cold `cachetui stats --json` with an empty cache directory, and the peak RSS of its
  process tree (the loader processes included), sampled every 20 ms;
- warm `stats --json` and `lookup`, the size of the on-disk index;
- the app in a real terminal (tmux at 160x48): first paint, usable with data, peak RSS;
  keystrokes timed from tmux send-keys until capture-pane shows the expected status;
- two floors for keystrokes: a bare Textual app that echoes an Input, and one that also
  repaints as many cells a key as cachetui's frame does (counted in cachetui's compositor
  while the same words are typed): ratios are to the second;
- `cachetui search` (warm) against `fzf --filter` over the same specs as lines.

With --tags N (N > 1), N tags of the largest size are loaded at once (the extra corpora are
made with other seeds and tags): warm app usable with data, its RSS, warm `stats`.

Needs tmux, and fzf for the comparison. The machine is noisy: quote the medians of one
run, and ratios within it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
CACHETUI = str(BIN / "cachetui")
SIZES = {"100k": (100_000, 1_000), "1m": (1_000_000, 10_000)}
EXTRA_TAGS = ["v0.23.1", "develop-2025-06-01", "v0.22.2", "v0.21.2"]
TERM_SIZE = (160, 48)
_SESSIONS = itertools.count()
QUERIES_TYPED: dict[str, list[str]] = {}  # size -> the spec-syntax queries timed, for the report


def corpus(size: str, tag: str = "develop", seed: int = 1) -> Path:
    path = HERE / (f"corpus-{size}" if tag == "develop" else f"corpus-{size}-{tag}")
    if not path.exists():
        specs, packages = SIZES[size]
        subprocess.run(
            [
                sys.executable,
                str(HERE / "make_corpus.py"),
                str(path),
                "--specs",
                str(specs),
                "--packages",
                str(packages),
                "--tag",
                tag,
                "--seed",
                str(seed),
            ],
            check=True,
        )
    return path


def child_env(cache: Path) -> dict[str, str]:
    """The environment of the processes measured: their own cache directory, and bytecode
    written as an installed package has it (a sandbox's PYTHONDONTWRITEBYTECODE would make
    every process compile cachetui's modules again)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "TERM": "xterm-256color"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def stats(xs: list[float]) -> str:
    return f"{statistics.median(xs):9.1f} {max(xs):9.1f}"


# -- whole processes ------------------------------------------------------------------------


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and every process below it, in MB."""
    total, pending = 0, [pid]
    while pending:
        p = pending.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{p}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return total / 1024


def timed(cmd: list[str], env=None) -> tuple[float, float]:
    """(wall ms, peak RSS of the process tree in MB) of one command."""
    peak = 0.0
    start = time.perf_counter()
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_mb(process.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    process.wait()
    wall = (time.perf_counter() - start) * 1000
    done.set()
    sampler.join()
    return wall, peak


_FLOOR_LOAD = r"""
import os, sys, time, msgspec
decode = msgspec.json.decode
start = time.perf_counter()
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        with open(os.path.join(folder, name), "rb") as handle:
            data = handle.read()
        for line in data.split(b"\n"):
            if line.startswith(b"spec_details:"):
                decode(line[13:])
            elif line.startswith(b"meta:"):
                decode(line[5:])
print((time.perf_counter() - start) * 1000)
"""


def load_floor(root: Path) -> float:
    """ms to list the tree, read every file and decode its JSON (msgspec), on one core, in a
    process of its own (its start and imports not counted)."""
    done = subprocess.run(
        [sys.executable, "-c", _FLOOR_LOAD, str(root)], capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


# -- a terminal ---------------------------------------------------------------------------


class Tmux:
    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.socket = (
            f"cachetui-bench-{os.getpid()}-{next(_SESSIONS)}"  # never reuse a dying server's socket
        )
        width, height = TERM_SIZE
        self.started = time.perf_counter()
        self.run(
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            str(width),
            "-y",
            str(height),
            " ".join(command),
            env=env,
        )

    def run(self, *args: str, env=None) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=env
        ).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "b")

    def wait(self, predicate, timeout: float = 60.0) -> float:
        """Milliseconds until predicate(screen) holds, polling capture-pane."""
        start = time.perf_counter()
        while time.perf_counter() - start < timeout:
            if predicate(self.screen()):
                return (time.perf_counter() - start) * 1000
        raise TimeoutError(self.screen())

    def key_and_wait(self, key: str, predicate, literal: bool = True) -> float:
        start = time.perf_counter()
        self.run("send-keys", "-t", "b", *(["-l", key] if literal else [key]))
        while time.perf_counter() - start < 30:
            if predicate(self.screen()):
                return (time.perf_counter() - start) * 1000
        raise TimeoutError(self.screen())

    def pid(self) -> int:
        return int(self.run("display-message", "-p", "-t", "b", "#{pane_pid}").strip())

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def floor_keystrokes(word: str, cells: int = 0) -> list[float]:
    command = [sys.executable, str(HERE / "floor_app.py")] + (
        ["--cells", str(cells)] if cells else []
    )
    term = Tmux(command, os.environ.copy())
    try:
        term.wait(lambda s: "echo:" in s)
        time.sleep(0.3)
        return [
            term.key_and_wait(ch, lambda s, v=word[: i + 1]: f"echo: {v}|" in s)
            for i, ch in enumerate(word)
        ]
    finally:
        term.close()


# Runs in the app's process (as `python probe.py LOG [args]`): counts the cells each
# compositor update sends, and notes each key.
_CELLS_PROBE = r"""
import atexit, json, sys, time
from textual import events
from textual._compositor import Compositor
log = []
log_path = sys.argv.pop(1)
atexit.register(lambda: open(log_path, "w").write(json.dumps(log)))
render = Compositor.render_update
def counted(self, *args, **kwargs):
    update = render(self, *args, **kwargs)
    if update is not None:
        spans = getattr(update, "spans", None)
        cells = (
            sum(x2 - x1 for _, x1, x2 in spans)
            if spans is not None
            else self.size.width * self.size.height
        )
        log.append((time.perf_counter(), "cells", cells))
    return update
Compositor.render_update = counted
def note_keys(cls):
    class Probe(cls):
        async def on_event(self, event):
            if isinstance(event, events.Key):
                log.append((time.perf_counter(), "key", 0))
            return await super().on_event(event)
    return Probe
if sys.argv[1] == "floor":
    sys.path.insert(0, sys.argv[2])
    import floor_app
    note_keys(floor_app.Floor)(int(sys.argv[3])).run()
else:
    from cachetui.tui.app import CacheTUI
    note_keys(CacheTUI)(sources=sys.argv[1:]).run()
"""


def cells_a_key(args: list[str], ready: str, keys: list[str], env: dict[str, str]) -> list[int]:
    """Cells repainted after each key (until the next), in the probe's app in tmux."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.json"
        probe = Path(tmp) / "probe.py"
        probe.write_text(_CELLS_PROBE)
        term = Tmux([sys.executable, str(probe), str(log), *args], env)
        try:
            term.wait(lambda s: ready in s)
            time.sleep(0.5)
            for key in keys:
                term.run("send-keys", "-t", "b", *(["-l", key] if len(key) == 1 else [key]))
                time.sleep(0.2)
            term.run("send-keys", "-t", "b", "C-q")
            deadline = time.time() + 20
            while not log.exists() and time.time() < deadline:
                time.sleep(0.1)
        finally:
            term.close()
        entries = json.loads(log.read_text()) if log.exists() else []
    per_key: list[int] = []
    for _, kind, cells in entries:
        if kind == "key":
            per_key.append(0)
        elif per_key:
            per_key[-1] += cells
    return per_key[1:]  # (the first key focuses the box, or is the first echo)


# -- the measurements ---------------------------------------------------------------------


def measure(size: str, repeat: int, keys: int) -> dict[str, list[float]]:
    sys.path.insert(0, str(HERE.parent))
    from cachetui.index.evaluate import evaluate
    from cachetui.index.filter import Filter
    from cachetui.index.query import QueryError, parse_query
    from cachetui.service import IndexService

    root = corpus(size)
    figures: dict[str, list[float]] = {}
    cache = Path(tempfile.mkdtemp(prefix="cachetui-bench-"))
    env = child_env(cache)
    subprocess.run(
        [CACHETUI, "--version"], env=env, capture_output=True
    )  # bytecode compiled, as an install has it

    # Cold: the floor, then whole `stats` processes with an empty cache directory each.
    figures["floor: list, read + decode every file, 1 core ms"] = [
        load_floor(root) for _ in range(repeat)
    ]
    colds = []
    for i in range(repeat):
        colds.append(
            timed([CACHETUI, "stats", str(root), "--json", "--cache-dir", str(cache / f"cold-{i}")])
        )
        shutil.rmtree(cache / f"cold-{i}", ignore_errors=True)
    figures["cold `stats --json` ms"] = [wall for wall, _ in colds]
    figures["cold `stats` peak RSS, process tree MB"] = [rss for _, rss in colds]

    # Warm: whole processes with the on-disk index present.
    subprocess.run([CACHETUI, "stats", str(root), "--json"], env=env, capture_output=True)
    warm = [timed([CACHETUI, "stats", str(root), "--json"], env) for _ in range(repeat)]
    figures["warm `stats --json` ms"] = [wall for wall, _ in warm]
    figures["warm `stats` RSS MB"] = [rss for _, rss in warm]
    index = IndexService([str(root)], cache_dir=cache / "cachetui").load().index
    figures["on-disk index MB"] = [
        sum(p.stat().st_size for p in (cache / "cachetui").glob("index-*")) / 1e6
    ]
    prefix = index.hashes[len(index.hashes) // 2][:7]
    figures["warm `lookup` ms"] = [
        timed([CACHETUI, "lookup", prefix, str(root)], env)[0] for _ in range(repeat)
    ]

    # Hash prefix lookup inside the index.
    rng = random.Random(1)
    samples = [
        index.hashes[rng.randrange(index.n_specs)][: rng.randint(1, 32)] for _ in range(2000)
    ]
    lookups = []
    for prefix_ in samples:
        start = time.perf_counter()
        index.lookup_hash(prefix_)
        lookups.append((time.perf_counter() - start) * 1000)
    figures["hash lookup in index ms"] = lookups

    # The app in a real terminal.
    words = _query_words(index, evaluate, Filter, keys)
    constraint_queries = QUERIES_TYPED[size] = _constraint_queries(index)
    evaluations = []
    for query in constraint_queries:  # each prefix once, as typing does: caches start cold
        for i in range(1, len(query) + 1):
            try:
                parse_query(query[:i])
            except QueryError:
                continue
            start = time.perf_counter()
            evaluate(index, Filter(query[:i]))
            evaluations.append((time.perf_counter() - start) * 1000)
    figures["evaluate: constraint query prefix ms"] = evaluations
    total = (
        f"{index.n_packages} of {index.n_packages} packages · "
        f"{index.n_specs} of {index.n_specs} specs"
    )
    term = Tmux([CACHETUI, str(root)], env)
    try:
        figures["app: first paint ms"] = [term.wait(lambda s: "Filters" in s)]
        figures["app: warm, usable with data ms"] = [
            term.wait(lambda s: total in s) + figures["app: first paint ms"][0]
        ]
        term.run("send-keys", "-t", "b", "/")
        time.sleep(0.3)
        strokes = []
        for word in words:
            for i, ch in enumerate(word):
                expected = evaluate(index, Filter(word[: i + 1])).status_text()
                strokes.append(term.key_and_wait(ch, lambda s, e=expected: e in s))
            for i in range(len(word)):
                expected = evaluate(index, Filter(word[: len(word) - i - 1])).status_text()
                strokes.append(
                    term.key_and_wait("BSpace", lambda s, e=expected: e in s, literal=False)
                )
        figures["app: search keystroke ms"] = strokes
        # Spec-syntax queries, typed and erased a character at a time. Some prefixes do not
        # parse (`%`, `os=`): the app then keeps the last result and says why in the status
        # line, and that is the screen to wait for. The echo in the box is waited for too,
        # since two prefixes can give the same status.
        figures["app: constraint keystroke ms"] = _type_queries(term, index, constraint_queries)
        # Facet toggles: to the sidebar, onto the first OS value, space on and off.
        term.run("send-keys", "-t", "b", "Escape")
        time.sleep(0.3)  # a lone ESC must not run into the next sequence (it would read as alt+...)
        term.run("send-keys", "-t", "b", "BTab", "BTab")
        time.sleep(0.3)
        sidebar_rows = 1 + len(index.facet_values["stack"]) + 1  # header, stacks, OS header
        for _ in range(sidebar_rows):
            term.run("send-keys", "-t", "b", "Down")
        time.sleep(0.5)
        value = index.facet_values["os"][0]
        on = evaluate(index, Filter.of("", {"os": {value}})).status_text()
        toggles = []
        for _ in range(max(3, keys // 4)):
            toggles.append(term.key_and_wait("Space", lambda s: on in s, literal=False))
            toggles.append(term.key_and_wait("Space", lambda s: total in s, literal=False))
        figures["app: facet toggle ms"] = toggles
        figures["app: peak RSS MB"] = [peak_rss_mb(term.pid())]
    finally:
        term.close()

    # What the app repaints a keystroke, then the floors: an echo, and an echo that also
    # repaints that many cells.
    # (A key that repaints nothing, as tmux's second byte of some keys, is not counted.)
    typed = [k for word in words for k in [*word, *["BSpace"] * len(word)]]
    ours = [c for c in cells_a_key([str(root)], total, ["/", *typed], env) if c] or [0]
    echo = [
        c
        for c in cells_a_key(["floor", str(HERE), "0"], "echo:", ["a", *typed], os.environ.copy())
        if c
    ] or [0]
    paint = max(0, int(statistics.median(ours) - statistics.median(echo)))
    figures["cachetui: cells repainted a keystroke"] = [float(c) for c in ours]
    figures["floor, echo: keystroke ms"] = [
        t for word in words for t in floor_keystrokes(word + word[::-1])
    ]
    figures["floor, echo + same cells: keystroke ms"] = [
        t for word in words for t in floor_keystrokes(word + word[::-1], paint)
    ]
    floor_cells = [
        c
        for c in cells_a_key(
            ["floor", str(HERE), str(paint)], "echo:", ["a", *typed], os.environ.copy()
        )
        if c
    ] or [0]
    figures["floor, echo + same cells: cells a keystroke"] = [float(c) for c in floor_cells]

    figures.update(_versus_fzf(root, index, words, env, repeat))
    shutil.rmtree(cache, ignore_errors=True)
    return figures


def measure_tags(size: str, count: int, repeat: int) -> dict[str, list[float]]:
    """`count` tags of `size` specs each, loaded together: the warm app and `stats`."""
    sys.path.insert(0, str(HERE.parent))
    from cachetui.service import IndexService

    roots = [corpus(size)] + [
        corpus(size, tag, seed=2 + i) for i, tag in enumerate(EXTRA_TAGS[: count - 1])
    ]
    cache = Path(tempfile.mkdtemp(prefix="cachetui-bench-tags-"))
    env = child_env(cache)
    figures: dict[str, list[float]] = {}
    cold = timed([CACHETUI, "stats", *map(str, roots), "--json"], env)
    figures[f"{count} tags: cold `stats --json` ms"] = [cold[0]]
    figures[f"{count} tags: cold `stats` peak RSS, process tree MB"] = [cold[1]]
    warm = [timed([CACHETUI, "stats", *map(str, roots), "--json"], env) for _ in range(repeat)]
    figures[f"{count} tags: warm `stats --json` ms"] = [wall for wall, _ in warm]
    figures[f"{count} tags: on-disk index MB"] = [
        sum(p.stat().st_size for p in (cache / "cachetui").glob("index-*")) / 1e6
    ]
    index = IndexService(list(map(str, roots)), cache_dir=cache / "cachetui").load().index
    total = (
        f"{index.n_packages} of {index.n_packages} packages · "
        f"{index.n_specs} of {index.n_specs} specs"
    )
    usable, rss = [], []
    for _ in range(repeat):
        term = Tmux([CACHETUI, *map(str, roots)], env)
        try:
            usable.append(term.wait(lambda s: total in s))
            time.sleep(1.0)  # let it settle, as a user would look at it
            rss.append(peak_rss_mb(term.pid()))
        finally:
            term.close()
    figures[f"{count} tags: app warm, usable with data ms"] = usable
    figures[f"{count} tags: app peak RSS MB"] = rss
    shutil.rmtree(cache, ignore_errors=True)
    return figures


def _constraint_queries(index) -> list[str]:
    """Spec-syntax queries made of values the corpus holds, short enough to fit the box."""
    from collections import Counter

    counts = index.facet_counts_in("compiler", None)
    compiler = max(
        (c for c in index.facet_values["compiler"] if "@" in c),
        key=lambda c: counts[index.facet_values["compiler"].index(c)],
    )
    name, _, version = compiler.partition("@")
    os_counts = index.facet_counts_in("os", None)
    os_value = index.facet_values["os"][os_counts.index(max(os_counts))]
    variants = Counter(v for v in index.variant_tokens() if v.startswith("+"))
    variant = variants.most_common(1)[0][0] if variants else "+shared"
    target = index.facet_values["target"][0]
    word = next(n for n in index.packages if len(n) >= 4)[:3]
    return [
        f"%{name}@{version.split('.')[0]} os={os_value}",
        f"{word} {variant} target={target}",
        f"/{index.hashes[index.n_specs // 3][:5]}",
    ]


def _type_queries(term: Tmux, index, queries: list[str]) -> list[float]:
    from cachetui.index.evaluate import evaluate
    from cachetui.index.filter import Filter
    from cachetui.index.query import QueryError, parse_query

    def expected(text: str, last_valid: str) -> tuple[str, str]:
        """The status line once `text` is typed, and the last valid one after it."""
        try:
            parse_query(text)
        except QueryError as error:
            if text.endswith("/") and not text[error.start :].strip("/"):
                return last_valid, last_valid  # a `/` just typed: not an error yet
            return f"{last_valid} · query: column {error.start + 1}: {error.message}", last_valid
        status = evaluate(index, Filter(text)).status_text()
        return status, status

    def shows(screen: str, text: str, status: str) -> bool:
        line = next((ln.strip() for ln in screen.splitlines() if " packages · " in ln), "")
        return line == status and (not text or f"│  {text} " in screen)

    strokes: list[float] = []
    last_valid = evaluate(index, Filter("")).status_text()
    for query in queries:
        texts = [query[: i + 1] for i in range(len(query))] + [
            query[: len(query) - i - 1] for i in range(len(query))
        ]
        keys = list(query) + ["BSpace"] * len(query)
        for text, key in zip(texts, keys):
            status, last_valid = expected(text, last_valid)
            strokes.append(
                term.key_and_wait(
                    key, lambda s, t=text, st=status: shows(s, t, st), literal=key != "BSpace"
                )
            )
    return strokes


def _query_words(index, evaluate, Filter, keys: int) -> list[str]:
    """Package-name queries whose every prefix changes the status line (so each keystroke shows)."""
    rng = random.Random(7)
    words: list[str] = []
    budget = keys
    candidates = [n for n in index.packages if 5 <= len(n) <= 9]
    rng.shuffle(candidates)
    for name in candidates:
        statuses = [evaluate(index, Filter(name[: i + 1])).status_text() for i in range(len(name))]
        statuses.insert(0, evaluate(index, Filter("")).status_text())
        if len(set(statuses)) == len(statuses):
            words.append(name)
            budget -= 2 * len(name)
        if budget <= 0:
            break
    return words


def _versus_fzf(root: Path, index, words: list[str], env, repeat: int) -> dict[str, list[float]]:
    """`cachetui search` (warm, its default output) against `fzf --filter` over the same specs
    as lines (package@version %compiler arch=... /hash stacks), each query `repeat` times."""
    if not shutil.which("fzf"):
        return {}
    lines = Path(tempfile.mkstemp(suffix=".txt")[1])
    with lines.open("w") as out:
        for row in range(index.n_specs):
            f = index.field
            out.write(
                f"{index.package_name(row)}@{f('version', row)} %{f('compiler', row)} "
                f"arch={f('platform', row)}-{f('os', row)}-{f('target', row)} "
                f"/{index.hashes[row]} {','.join(index.stacks(row))}\n"
            )
    out: dict[str, list[float]] = {}
    for word in words[:4]:
        fzf, ours = [], []
        for _ in range(repeat):
            with lines.open() as source:
                start = time.perf_counter()
                subprocess.run(["fzf", "--filter", word], stdin=source, stdout=subprocess.DEVNULL)
                fzf.append((time.perf_counter() - start) * 1000)
            ours.append(timed([CACHETUI, "search", word, str(root)], env)[0])
        out[f"search {word!r}: cachetui ms"] = ours
        out[f"search {word!r}: fzf --filter ms"] = fzf
    lines.unlink()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100k,1m")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keys", type=int, default=24, help="about how many keystrokes to time")
    parser.add_argument(
        "--tags", type=int, default=1, help="also load this many tags of the largest size at once"
    )
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    results = {size: measure(size, args.repeat, args.keys) for size in sizes}
    if args.tags > 1:
        results[f"{args.tags} tags of {sizes[-1]}"] = measure_tags(
            sizes[-1], args.tags, args.repeat
        )
    for size in QUERIES_TYPED:
        print(f"constraint queries at {size}: " + ", ".join(repr(q) for q in QUERIES_TYPED[size]))
    print(
        f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; "
        f"terminal {TERM_SIZE[0]}x{TERM_SIZE[1]} in tmux"
    )
    for size, figures in results.items():
        print(f"\n{size} {'median':>52} {'max':>9}")
        for name, xs in figures.items():
            print(f"  {name:<50} {stats(xs)}")
        if "cold `stats --json` ms" in figures:
            floor = statistics.median(figures["floor: list, read + decode every file, 1 core ms"])
            print(
                f"  {'cold `stats` / load floor (medians)':<50} "
                f"{statistics.median(figures['cold `stats --json` ms']) / floor:9.2f}"
            )
            for base in ("floor, echo: keystroke ms", "floor, echo + same cells: keystroke ms"):
                key_floor = statistics.median(figures[base])
                for name in (
                    "app: search keystroke ms",
                    "app: constraint keystroke ms",
                    "app: facet toggle ms",
                ):
                    label = f"{name.replace(' ms', '')} / {base.split(':')[0]}"
                    print(f"  {label:<50} {statistics.median(figures[name]) / key_floor:9.2f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
