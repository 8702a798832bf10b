"""Writing a warehouse's files without locking its readers out: writers' locks, building copies, publishing.

DuckDB lets one process write a file and locks every other process out while it does, readers included.
So no rankhouse process writes a published file in place: a writer takes the file's lock (one writer per
file, `locks/<name>.lock`), works on a building copy (`building/`), and publishes it by renaming it over
the published file, which readers keep reading until then (a reader that opened the old file keeps it).
A copy no write changed is not published: the published file stays as it was, byte for byte. A building
copy left by a writer that died (its lock is free again) is the next writer's starting point, so a killed
run carries on from its last committed statement.

    >>> lock = WriterLock(Path("locks/inputs.lock"), "the warehouse's inputs")  # doctest: +SKIP
    >>> lock.acquire(print); ...; lock.release()  # doctest: +SKIP
"""

from __future__ import annotations

import fcntl
import filecmp
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from rankhouse.errors import RankhouseError

WAIT_VARIABLE = "RANKHOUSE_LOCK_WAIT"  # seconds a writer waits for another writer of the same file
DEFAULT_WAIT = 900.0
_HELD: dict[str, str] = {}  # lock path -> what it guards, for the locks this process holds


class WriterLock:
    """An exclusive lock on one of a warehouse's files, held by one process, and within it by one writer
    (flock on `path`; released when the process ends, however it ends)."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what
        self._fd: int | None = None

    def acquire(self, say: Callable[[str], None] | None = None) -> None:
        """Take the lock; if another process holds it, say so once and wait for it (up to
        $RANKHOUSE_LOCK_WAIT seconds, 900 by default). A second writer in this process is refused."""
        key = str(self.path)
        if key in _HELD:
            raise RankhouseError(f"{self.what} is already being written by this process (one writer per file)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        waited, limit = 0.0, float(os.environ.get(WAIT_VARIABLE) or DEFAULT_WAIT)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if waited == 0 and say is not None:
                    say(f"waiting for {self._holder(fd)}, which is writing {self.what}")
                if waited >= limit:
                    holder = self._holder(fd)
                    os.close(fd)
                    raise RankhouseError(
                        f"{self.what} is still being written by {holder} after {limit:.0f} s "
                        f"({WAIT_VARIABLE} sets how long to wait)"
                    ) from None
                time.sleep(0.2)
                waited += 0.2
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        _HELD[key] = self.what

    def _holder(self, fd: int) -> str:
        try:
            pid = os.pread(fd, 32, 0).decode().strip()
        except OSError:
            pid = ""
        return f"process {pid}" if pid.isdigit() else "another process"

    def release(self) -> None:
        """Let the next writer in."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
            _HELD.pop(str(self.path), None)

    @property
    def held(self) -> bool:
        return self._fd is not None


def start_copy(published: Path, building: Path) -> str:
    """Make `building` the writer's copy of `published`: a copy left by a writer that died is kept (its
    committed work goes on), else a copy of the published file (with its WAL, if a foreign writer left
    one), else nothing (a new file). Returns which: 'resumed', 'copied' or 'new'. The caller holds the lock."""
    building.parent.mkdir(parents=True, exist_ok=True)
    if building.exists():
        return "resumed"
    if published.exists():
        partial = building.with_name(building.name + ".partial")
        shutil.copyfile(published, partial)
        wal = Path(str(published) + ".wal")
        if wal.exists():
            shutil.copyfile(wal, str(building) + ".wal")
        os.replace(partial, building)
        return "copied"
    return "new"


def publish(building: Path, published: Path) -> bool:
    """Put a closed building copy in place of the published file, atomically (rename, then the folder
    synced); a copy identical to the published file is removed instead, so that the published file stays
    as it was. Returns whether anything was published."""
    if not building.exists():
        return False
    wal = Path(str(building) + ".wal")
    if wal.exists():
        raise RankhouseError(f"internal: {building} still has a write-ahead log; it is published only when closed")
    if published.exists() and _same_bytes(building, published):
        building.unlink()
        return False
    with open(building, "rb") as handle:
        os.fsync(handle.fileno())
    published.parent.mkdir(parents=True, exist_ok=True)
    os.replace(building, published)
    stale = Path(str(published) + ".wal")
    if stale.exists():  # a foreign writer's log of the file it replaced: applied in the copy already
        stale.unlink()
    _sync_folder(published.parent)
    return True


def discard(building: Path) -> None:
    """Remove a building copy (and its log) that is not to be published."""
    for path in (building, Path(str(building) + ".wal")):
        path.unlink(missing_ok=True)


def _same_bytes(a: Path, b: Path) -> bool:
    return a.stat().st_size == b.stat().st_size and filecmp.cmp(a, b, shallow=False)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
