"""Benchmarks for cachetui at scale; prints a table of figures (medians and maxima).

    python benchmarks/run.py [--sizes 100k,1m] [--repeat 5] [--keys 20]

Needs tmux (keystroke figures are measured in a real terminal: send-keys, then poll
capture-pane until the screen shows the expected status) and, for the comparison,
fzf. Corpora are made by benchmarks/make_corpus.py when missing. The machine is noisy:
quote the figures of one run, and ratios within that run.
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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
CACHETUI = str(BIN / "cachetui")
SIZES = {"100k": (100_000, 1_000), "1m": (1_000_000, 10_000)}
TERM_SIZE = (160, 48)
_SESSIONS = itertools.count()
QUERIES_TYPED: dict[str, list[str]] = {}  # size -> the spec-syntax queries timed, for the report


def corpus(size: str) -> Path:
    path = HERE / f"corpus-{size}"
    if not path.exists():
        specs, packages = SIZES[size]
        subprocess.run([sys.executable, str(HERE / "make_corpus.py"), str(path), "--specs", str(specs), "--packages", str(packages)], check=True)
    return path


def stats(xs: list[float]) -> str:
    return f"{statistics.median(xs):8.1f} {max(xs):8.1f}"


def timed(cmd: list[str], env=None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return (time.perf_counter() - start) * 1000


# -- a terminal ---------------------------------------------------------------------------


class Tmux:
    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.socket = f"cachetui-bench-{os.getpid()}-{next(_SESSIONS)}"  # never reuse a dying server's socket
        width, height = TERM_SIZE
        self.started = time.perf_counter()
        self.run("new-session", "-d", "-s", "b", "-x", str(width), "-y", str(height), " ".join(command), env=env)

    def run(self, *args: str, env=None) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=env).stdout

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


def floor_keystrokes(word: str, fps: str | None = None) -> list[float]:
    env = os.environ.copy()
    if fps is not None:
        env["TEXTUAL_FPS"] = fps
    term = Tmux([sys.executable, str(HERE / "floor_app.py")], env)
    try:
        term.wait(lambda s: "echo:" in s)
        return [term.key_and_wait(ch, lambda s, v=word[: i + 1]: f"echo: {v}|" in s) for i, ch in enumerate(word)]
    finally:
        term.close()


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
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "TERM": "xterm-256color"}

    # Cold load, in-process, no on-disk index; peak RSS of one cold `stats` process.
    figures["cold load (in-process) ms"] = []
    for _ in range(repeat):
        start = time.perf_counter()
        report = IndexService([str(root)], use_cache=False).load()
        figures["cold load (in-process) ms"].append((time.perf_counter() - start) * 1000)
    index = report.index
    usage = subprocess.run(["/usr/bin/time", "-f", "%M", CACHETUI, "stats", str(root), "--json", "--no-cache"], capture_output=True, text=True)
    figures["cold stats peak RSS MB"] = [int(usage.stderr.strip().splitlines()[-1]) / 1024]

    # Warm: whole processes with the on-disk index present.
    subprocess.run([CACHETUI, "stats", str(root), "--json"], env=env, capture_output=True)
    figures["warm `stats --json` ms"] = [timed([CACHETUI, "stats", str(root), "--json"], env) for _ in range(repeat)]
    prefix = index.hashes[len(index.hashes) // 2][:7]
    figures["warm `lookup` ms"] = [timed([CACHETUI, "lookup", prefix, str(root)], env) for _ in range(repeat)]

    # Hash prefix lookup inside the index.
    rng = random.Random(1)
    samples = [index.hashes[rng.randrange(index.n_specs)][: rng.randint(1, 32)] for _ in range(2000)]
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
    term = Tmux([CACHETUI, str(root)], env)
    try:
        total = f"{index.n_packages} of {index.n_packages} packages · {index.n_specs} of {index.n_specs} specs"
        figures["app: first paint ms"] = [term.wait(lambda s: "Filters" in s)]
        figures["app: warm, usable with data ms"] = [term.wait(lambda s: total in s) + figures["app: first paint ms"][0]]
        term.run("send-keys", "-t", "b", "/")
        time.sleep(0.3)
        strokes = []
        for word in words:
            for i, ch in enumerate(word):
                expected = evaluate(index, Filter(word[: i + 1])).status_text()
                strokes.append(term.key_and_wait(ch, lambda s, e=expected: e in s))
            for i in range(len(word)):
                expected = evaluate(index, Filter(word[: len(word) - i - 1])).status_text()
                strokes.append(term.key_and_wait("BSpace", lambda s, e=expected: e in s, literal=False))
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

    floor = []
    for word in words:
        floor.extend(floor_keystrokes(word + word[::-1]))
    figures["floor: bare Textual keystroke ms"] = floor
    # The floor runs as Textual comes (60 frames a second); cachetui asks for 120. For
    # comparison, not for the ratios: the same floor at 120.
    figures["floor at TEXTUAL_FPS=120 ms"] = [t for word in words for t in floor_keystrokes(word + word[::-1], "120")]

    figures.update(_versus_fzf(root, index, words, env))
    shutil.rmtree(cache, ignore_errors=True)
    return figures


def _constraint_queries(index) -> list[str]:
    """Spec-syntax queries made of values the corpus holds, short enough to fit the box."""
    from collections import Counter

    counts = index.facet_counts_in("compiler", None)
    compiler = max((c for c in index.facet_values["compiler"] if "@" in c), key=lambda c: counts[index.facet_values["compiler"].index(c)])
    name, _, version = compiler.partition("@")
    os_counts = index.facet_counts_in("os", None)
    os_value = index.facet_values["os"][os_counts.index(max(os_counts))]
    variants = Counter(v for vs in index.distinct_values("variantset") for v in vs if v.startswith("+"))
    variant = variants.most_common(1)[0][0] if variants else "+shared"
    target = index.facet_values["target"][0]
    word = next(n for n in index.packages if len(n) >= 4)[:3]
    return [f"%{name}@{version.split('.')[0]} os={os_value}", f"{word} {variant} target={target}", f"/{index.hashes[index.n_specs // 3][:5]}"]


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
        texts = [query[: i + 1] for i in range(len(query))] + [query[: len(query) - i - 1] for i in range(len(query))]
        keys = list(query) + ["BSpace"] * len(query)
        for text, key in zip(texts, keys):
            status, last_valid = expected(text, last_valid)
            strokes.append(term.key_and_wait(key, lambda s, t=text, st=status: shows(s, t, st), literal=key != "BSpace"))
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


def _versus_fzf(root: Path, index, words: list[str], env) -> dict[str, list[float]]:
    """`cachetui search` (warm) against `fzf --filter` over the same specs as lines."""
    if not shutil.which("fzf"):
        return {}
    lines = Path(tempfile.mkstemp(suffix=".txt")[1])
    with lines.open("w") as out:
        for row in range(index.n_specs):
            f = index.field
            out.write(f"{index.package_name(row)}@{f('version', row)} %{f('compiler', row)} arch={f('platform', row)}-{f('os', row)}-{f('target', row)} /{index.hashes[row]} {','.join(index.stacks(row))}\n")
    out: dict[str, list[float]] = {}
    for word in words[:4]:
        with lines.open() as source:
            start = time.perf_counter()
            subprocess.run(["fzf", "--filter", word], stdin=source, stdout=subprocess.DEVNULL)
            fzf = (time.perf_counter() - start) * 1000
        ours = timed([CACHETUI, "search", word, str(root)], env)
        out[f"search {word!r}: cachetui ms"] = [ours]
        out[f"search {word!r}: fzf --filter ms"] = [fzf]
    lines.unlink()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100k,1m")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keys", type=int, default=24, help="about how many keystrokes to time")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args()
    results = {size: measure(size, args.repeat, args.keys) for size in args.sizes.split(",")}
    for size in results:
        print(f"constraint queries at {size}: " + ", ".join(repr(q) for q in QUERIES_TYPED[size]))
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; terminal {TERM_SIZE[0]}x{TERM_SIZE[1]} in tmux")
    for size, figures in results.items():
        print(f"\n{size} ({'':>1}median      max)")
        for name, xs in figures.items():
            print(f"  {name:<46} {stats(xs)}")
        floor = statistics.median(figures["floor: bare Textual keystroke ms"])
        for name in ("app: search keystroke ms", "app: constraint keystroke ms", "app: facet toggle ms"):
            label = name.replace(" ms", "") + " / floor (medians)"
            print(f"  {label:<46} {statistics.median(figures[name]) / floor:8.2f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
