"""The progress of an extraction on stderr: rows done of all, rows per second, cost so far, ETA.

On a terminal one line is redrawn in place (at most every REDRAW seconds); otherwise, e.g. in a log,
a plain line is written every LINE_EVERY seconds, and one at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

REDRAW = 0.2
LINE_EVERY = 5.0


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Counts rows as they complete and reports them through `write` (stderr by default)."""

    def __init__(self, label: str, total: int, done: int, cost: float = 0.0, tty: bool | None = None,
                 write: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.label, self.total, self.done, self.cost = label, total, done, cost
        self.start_done = done
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.write = write or (lambda text: print(text, end="", file=sys.stderr, flush=True))
        self.clock = clock
        self.started = clock()
        self.shown = float("-inf")
        self.drawn = False

    def line(self) -> str:
        elapsed = max(self.clock() - self.started, 1e-9)
        made = self.done - self.start_done
        rate = made / elapsed
        left = self.total - self.done
        eta = _duration(left / rate) if rate > 0 else "?"
        share = self.done / self.total if self.total else 1.0
        return (f"{self.label}: {self.done:,}/{self.total:,} rows ({share:.0%}), {rate:.1f} rows/s, "
                f"USD {self.cost:.4f}, ETA {eta if left else '0:00'}")  # fmt: skip

    def advance(self, rows: int, cost: float) -> None:
        """`rows` more rows done (0 for a failed attempt); `cost`: the estimated cost so far."""
        self.done += rows
        self.cost = cost
        now = self.clock()
        if now - self.shown >= (REDRAW if self.tty else LINE_EVERY):
            self.show()

    def show(self) -> None:
        self.shown = self.clock()
        if self.tty:
            self.write("\r" + self.line() + "\x1b[K")
            self.drawn = True
        else:
            self.write(self.line() + "\n")

    def finish(self) -> None:
        """The last line (ends the redrawn line on a terminal)."""
        self.show()
        if self.tty and self.drawn:
            self.write("\n")
