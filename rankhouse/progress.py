"""Progress sinks: where a command's notes, model lines, loads and bars go.

A command makes one sink (rankhouse/cli/common.py: `progress_sink`, from --quiet and --json) and hands
it down: Study, Runner.run, the generators (through Context) and the loaders' callers report to it and
print nothing themselves. Data goes to stdout; a sink writes to stderr.

- Progress: reports nothing (--quiet, and the default of the library's functions).
- TextProgress: lines for a person. A line per model with its rows and seconds; on a terminal, while a
  model builds (or a file loads), a live line `building judged_ranking ... 12 s` redrawn in place
  every second and replaced by the final line; elsewhere only the final line, and a `still building X
  (30 s)` line every 30 s of a long one. Bars (encoding, hashing, loading) show only for work that
  takes over a second: redrawn in place on a terminal, a line every 10% elsewhere.
- JsonProgress: one JSON object per line, each with an `event`: `note` (message), `model_started`
  (model), `model_running` (model, seconds; every 30 s), `model` (model, status: built, skipped,
  failed or interrupted, rows: null for a view, seconds, fingerprint), `models_skipped` (what,
  models, reason: models a run leaves out, rankhouse/warehouse/scope.py), `loading` (path), `load`
  (table, name, path, sha256, rows, status), `progress` (label, done, total; every 10%) and `rows`
  (label, done, total, rate, cost, eta: a Meter's, every 5 s, e.g. an extraction's).

    >>> sink = TextProgress(stream=sys.stdout, tty=False)
    >>> sink.say("hello")
    hello
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rankhouse.loaders.sources import LoadResult
    from rankhouse.warehouse.runner import ModelRun
    from rankhouse.warehouse.scope import Skipped

Bar = Callable[[int, int], None]  # called with (done, total) as work proceeds


class Progress:
    """A sink that reports nothing: what --quiet gives, and every library function's default."""

    def say(self, message: str) -> None:
        """A note for the person running the command.  Example: sink.say("froze trec_sample-1")"""

    def model_started(self, name: str) -> None:
        """A model's build (or its skip check) begins.  Example: sink.model_started("judged_ranking")"""

    def model_finished(self, result: ModelRun) -> None:
        """A model was built, skipped (unchanged), failed or interrupted.  Example: sink.model_finished(run)"""

    def models_skipped(self, skipped: Skipped) -> None:
        """Models a run leaves out, and why.  Example: sink.models_skipped(Skipped("2 lanes models", names, why))"""
        self.say(str(skipped))

    @contextmanager
    def loading(self, path: str) -> Iterator[None]:
        """While a file loads.  Example: with sink.loading("runs/bm25.run"): load_run(wh, "runs/bm25.run")"""
        yield

    def loaded(self, result: LoadResult) -> None:
        """A file was loaded (or found loaded already).  Example: sink.loaded(load_run(wh, "a.run"))"""
        self.say(str(result))

    def bar(self, label: str) -> Bar:
        """A callback for work measured in steps, called with (done, total).  Example: sink.bar("encoding")(5, 10)"""
        return lambda done, total: None

    def meter(self, label: str, total: int, done: int = 0, cost: float = 0.0) -> Meter:
        """A Meter of rows with rate, cost and ETA (an extraction's), reporting here.
        Example: sink.meter("extracting", 13083, 40, 0.01).advance(1, 0.0102)"""
        return Meter(label, total, done, cost, tty=False, write=lambda text: None)


SILENT = Progress()


def model_line(result: ModelRun) -> str:
    """The final line of one model in a run: status, name, rows (or `view`), seconds."""
    rows = "view" if result.rows is None else f"{result.rows:,} rows"
    return f"  {result.status:<8} {result.model:<28} {rows:>15}  {result.seconds:7.2f} s"


REDRAW = 0.2  # a Meter's seconds between redraws on a terminal
LINE_EVERY = 5.0  # and between its lines elsewhere


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Meter:
    """Rows done of all, rows per second, cost so far and ETA (an extraction's): on a terminal one line
    redrawn in place (at most every REDRAW seconds), elsewhere a line every LINE_EVERY seconds and one
    at the end, through `write` (stderr by default); or, with `event`, each of those as a dict of
    fields (label, done, total, rate, cost, eta) instead of text. A sink's `meter` makes one.

    Example: meter = Meter("extracting", 100, 0); meter.advance(1, 0.002); meter.finish()"""

    def __init__(self, label: str, total: int, done: int, cost: float = 0.0, tty: bool | None = None,
                 write: Callable[[str], None] | None = None, clock: Callable[[], float] = time.monotonic,
                 event: Callable[[dict], None] | None = None) -> None:  # fmt: skip
        self.label, self.total, self.done, self.cost = label, total, done, cost
        self.start_done = done
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.write = write or (lambda text: print(text, end="", file=sys.stderr, flush=True))
        self.clock = clock
        self.event = event
        self.started = clock()
        self.shown = float("-inf")
        self.drawn = False

    def fields(self) -> dict:
        """label, done, total, rate (rows/s this run), cost (USD so far), eta (h:mm:ss, ? before any row)."""
        rate = (self.done - self.start_done) / max(self.clock() - self.started, 1e-9)
        left = self.total - self.done
        eta = "0:00" if not left else _duration(left / rate) if rate > 0 else "?"
        return {"label": self.label, "done": self.done, "total": self.total, "rate": round(rate, 3),
                "cost": round(self.cost, 6), "eta": eta}  # fmt: skip

    def line(self) -> str:
        f = self.fields()
        share = self.done / self.total if self.total else 1.0
        return (f"{self.label}: {self.done:,}/{self.total:,} rows ({share:.0%}), {f['rate']:.1f} rows/s, "
                f"USD {self.cost:.4f}, ETA {f['eta']}")  # fmt: skip

    def advance(self, rows: int, cost: float) -> None:
        """`rows` more rows done (0 for a failed attempt); `cost`: the estimated cost so far."""
        self.done += rows
        self.cost = cost
        now = self.clock()
        if now - self.shown >= (REDRAW if self.tty else LINE_EVERY):
            self.show()

    def show(self) -> None:
        self.shown = self.clock()
        if self.event is not None:
            self.event(self.fields())
        elif self.tty:
            self.write("\r" + self.line() + "\x1b[K")
            self.drawn = True
        else:
            self.write(self.line() + "\n")

    def finish(self) -> None:
        """The last line (ends the redrawn line on a terminal)."""
        self.show()
        if self.tty and self.drawn and self.event is None:
            self.write("\n")


class _Ticker:
    """Calls `tick(seconds so far)` from a thread, first after `first` seconds, then every `every`
    seconds, until stopped. DuckDB lets go of Python's lock while it runs a statement, so the thread
    runs while a model builds."""

    def __init__(self, first: float, every: float, tick: Callable[[float], None]) -> None:
        self._stop = threading.Event()
        self._start = time.monotonic()
        self._first, self._every, self._tick = first, every, tick
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wait = self._first
        while not self._stop.wait(wait):
            self._tick(time.monotonic() - self._start)
            wait = self._every

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class TextProgress(Progress):
    """Lines for a person on `stream` (stderr); live lines and bars redrawn in place where it is a
    terminal (`tty`, default: whether it is one).

    `live_after` and `live_every` are the seconds before a live line first shows and between redraws on
    a terminal; `still_every` the seconds between `still building` lines elsewhere; `bar_after` the
    seconds a bar's work must take before it shows.

    Example: Runner(wh, project).run(names, progress=TextProgress())
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        tty: bool | None = None,
        live_after: float = 1.0,
        live_every: float = 1.0,
        still_every: float = 30.0,
        bar_after: float = 1.0,
    ) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.live_after, self.live_every, self.still_every, self.bar_after = (
            live_after,
            live_every,
            still_every,
            bar_after,
        )
        self._lock = threading.Lock()
        self._ticker: _Ticker | None = None
        self._drawn = False  # a live line or bar is on the screen, without its newline

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text)
            self.stream.flush()

    def _line(self, text: str) -> None:
        """A whole line, in place of a live line or bar drawn before it."""
        with self._lock:
            self.stream.write(("\r\x1b[K" if self._drawn else "") + text + "\n")
            self.stream.flush()
            self._drawn = False

    def _draw(self, text: str) -> None:
        """A live line, redrawn in place (a terminal only)."""
        with self._lock:
            self.stream.write("\r" + text + "\x1b[K")
            self.stream.flush()
            self._drawn = True

    def say(self, message: str) -> None:
        self._line(message)

    def _live(self, doing: str) -> None:
        """Show that `doing` (`building judged_ranking`) goes on: a live line on a terminal, a line every
        `still_every` seconds elsewhere."""
        self._stop_live()
        if self.tty:
            self._ticker = _Ticker(self.live_after, self.live_every, lambda s: self._draw(f"{doing} ... {s:.0f} s"))
        else:
            self._ticker = _Ticker(
                self.still_every, self.still_every, lambda s: self._line(f"  still {doing} ({s:.0f} s)")
            )

    def _stop_live(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def model_started(self, name: str) -> None:
        self._live(f"building {name}")

    def model_finished(self, result: ModelRun) -> None:
        self._stop_live()
        self._line(model_line(result))

    @contextmanager
    def loading(self, path: str) -> Iterator[None]:
        self._live(f"loading {path}")
        try:
            yield
        finally:
            self._stop_live()

    def loaded(self, result: LoadResult) -> None:
        self._stop_live()
        self._line(str(result))

    def meter(self, label: str, total: int, done: int = 0, cost: float = 0.0) -> Meter:
        return Meter(label, total, done, cost, tty=self.tty, write=self._write)

    def bar(self, label: str) -> Bar:
        start = time.monotonic()
        due = every_tenth()
        state = {"shown": False, "drawn_at": 0.0}

        def report(done: int, total: int) -> None:
            now = time.monotonic()
            if not state["shown"] and now - start < self.bar_after:
                return  # work done within bar_after seconds shows no bar
            state["shown"] = True
            if not self.tty:
                if due(done, total):
                    self._line(f"{label}: {done:,} of {total:,} ({done / total if total else 1:.0%})")
                return
            filled = int(30 * done / total) if total else 30
            text = f"{label} [{'#' * filled}{'.' * (30 - filled)}] {done:,}/{total:,}"
            if done >= total:
                self._line(text)
            elif now - state["drawn_at"] >= 0.1:
                self._draw(text)
                state["drawn_at"] = now

        return report


def every_tenth() -> Callable[[int, int], bool]:
    """A test of (done, total) that is true at the first call, once per tenth of the work, and at the end.

    >>> due = every_tenth()
    >>> [done for done in range(21) if due(done, 20)]
    [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
    """
    state = {"next": 0}  # the next tenth to report, in whole tenths (exact, unlike sums of 0.1)

    def due(done: int, total: int) -> bool:
        if done < total and done * 10 < state["next"] * total:
            return False
        while state["next"] * total <= done * 10 and state["next"] <= 10:
            state["next"] += 1
        return True

    return due


class JsonProgress(Progress):
    """One JSON object per line on `stream` (stderr), for programs that follow a command.

    Example: Study(protocol, wh, progress=JsonProgress()).prepare()
    """

    def __init__(self, stream: TextIO | None = None, running_every: float = 30.0) -> None:
        self.stream = stream or sys.stderr
        self.running_every = running_every
        self._lock = threading.Lock()
        self._ticker: _Ticker | None = None

    def event(self, event: str, **fields: object) -> None:
        """Write one event.  Example: sink.event("note", message="froze trec_sample-1")"""
        with self._lock:
            self.stream.write(json.dumps({"event": event, **fields}, default=str) + "\n")
            self.stream.flush()

    def say(self, message: str) -> None:
        self.event("note", message=message)

    def model_started(self, name: str) -> None:
        self.event("model_started", model=name)
        every = self.running_every
        self._ticker = _Ticker(every, every, lambda s: self.event("model_running", model=name, seconds=round(s, 3)))

    def model_finished(self, result: ModelRun) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self.event("model", model=result.model, status=result.status, rows=result.rows,
                   seconds=round(result.seconds, 6), fingerprint=result.fingerprint)  # fmt: skip

    def models_skipped(self, skipped: Skipped) -> None:
        self.event("models_skipped", what=skipped.what, models=list(skipped.models), reason=skipped.reason)

    @contextmanager
    def loading(self, path: str) -> Iterator[None]:
        self.event("loading", path=path)
        yield

    def loaded(self, result: LoadResult) -> None:
        self.event("load", table=result.table, name=result.name, path=result.path, sha256=result.sha256,
                   rows=result.rows, status=result.status)  # fmt: skip

    def bar(self, label: str) -> Bar:
        due = every_tenth()

        def report(done: int, total: int) -> None:
            if due(done, total):
                self.event("progress", label=label, done=done, total=total)

        return report

    def meter(self, label: str, total: int, done: int = 0, cost: float = 0.0) -> Meter:
        return Meter(label, total, done, cost, tty=False, event=lambda fields: self.event("rows", **fields))
