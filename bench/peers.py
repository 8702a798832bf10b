"""Shared by the speed scripts: run one peer in a fresh Python process, read its result and its peak memory."""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PERFORMANCE = ROOT / "docs" / "performance.md"  # where `--write-docs` writes each script's section


def installed(module: str) -> bool:
    """Whether a peer's module can be imported here (a bench runs the peers it finds and names the others).

    >>> installed("json"), installed("no_such_peer")
    (True, False)
    """
    return importlib.util.find_spec(module) is not None


def run_child(script: str, *args: str) -> dict:
    """Run `python script --child *args` in a fresh process with an empty numba cache (so that ranx's
    first call compiles from scratch) and return the JSON object on its last line of output, with the
    process's peak resident memory as `peak_rss_mb` (the `own_peak_mb` the child printed, else wait4's),
    its CPU time as `cpu_seconds` and its wall time as `wall_seconds`."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as scratch:
        env["NUMBA_CACHE_DIR"] = os.path.join(scratch, "numba")
        done = run_measured([sys.executable, script, "--child", *args], env=env)
    if done["returncode"]:
        sys.exit(f"{script} --child {' '.join(args)} failed:\n{done['stderr']}")
    result = json.loads(done["stdout"].strip().splitlines()[-1])
    result["peak_rss_mb"] = result.pop("own_peak_mb", None) or done["peak_rss_mb"]
    result["cpu_seconds"] = done["cpu_seconds"]
    result["wall_seconds"] = done["wall_seconds"]
    return result


def own_peak_mb() -> float:
    """This process's peak resident memory since it started its program (VmHWM, Linux), in MB: what a
    child prints as `own_peak_mb` for run_child. Not wait4's maxrss, which a child started by fork (or
    vfork) and exec inherits from its parent: after a parent generated the data, every child would
    report at least the parent's size.

    >>> own_peak_mb() > 0
    True
    """
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def tree_rss_mb(root: int) -> float:
    """The resident memory of process `root` and all its descendants, summed (MB; from /proc, Linux only):
    what a Python process that starts a JVM holds, the JVM included.

    >>> tree_rss_mb(os.getpid()) > 0
    True
    """
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold blanks
        except OSError:  # the process ended meanwhile
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)  # fields[1]: the parent's pid
        rss[pid] = int(fields[21])  # resident pages
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total * os.sysconf("SC_PAGE_SIZE") / 2**20


def folder_mb(pattern: str | Path | list[str | Path]) -> float:
    """The bytes of the files under the folders (or of the files) that `pattern` (a path, or a glob such as
    `tmp/*/spill`, or a list of them) names (MB; 0 when there is none), read while other processes write and
    delete there.

    >>> folder_mb("/no/such/folder"), folder_mb(["/no/such/folder", "/nor/this"])
    (0.0, 0.0)
    """
    patterns = pattern if isinstance(pattern, list) else [pattern]
    total = 0
    for folder in sorted({found for one in patterns for found in glob.glob(str(one))}):
        if os.path.isfile(folder):
            try:
                total += os.lstat(folder).st_size
            except OSError:  # deleted meanwhile
                pass
            continue
        for root, _, files in os.walk(folder):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_size
                except OSError:  # deleted meanwhile
                    pass
    return total / 2**20


def run_measured(
    command: list[str],
    env: dict | None = None,
    folders: dict[str, str | Path | list[str | Path]] | None = None,
    echo: Callable[[str], None] | None = None,
    every: float = 0.5,
    heartbeat: float | None = None,
) -> dict:
    """Run `command` in a fresh process and measure it as it runs: returns its returncode, stdout, stderr,
    `wall_seconds`, `cpu_seconds` (its user and system time, from the same rusage: on a loaded machine
    less noisy than wall time), `peak_rss_mb` (its own rusage, read by wait4: the process alone), `peak_tree_rss_mb`
    (the process and its descendants, e.g. a JVM, summed and polled every `every` seconds) and, for each
    of `folders` (a name -> a folder or glob: folder_mb), the peak MB of its files as `peak_disk_mb[name]`.
    Each line the process writes to stderr is passed to `echo` as it comes, and every `heartbeat`
    seconds a line `... N s, M MB` (its memory now). A failing process is returned, not raised.

    Example: run_measured([sys.executable, "-c", "print(1)"])["stdout"] gives '1\\n'.
    """
    folders = folders or {}
    peaks = {"tree": 0.0, **{name: 0.0 for name in folders}}
    with tempfile.TemporaryDirectory() as scratch:
        out_path, err_path = os.path.join(scratch, "out"), os.path.join(scratch, "err")
        with open(out_path, "w") as out, open(err_path, "w") as err:
            started = time.perf_counter()
            child = subprocess.Popen(command, stdout=out, stderr=err, env=env)
            stop = threading.Event()

            def poll() -> None:
                with open(err_path) as lines:
                    pending, beat = "", heartbeat
                    while True:
                        ended = stop.is_set()  # one last round after the process ended
                        now = tree_rss_mb(child.pid)
                        peaks["tree"] = max(peaks["tree"], now)
                        elapsed = time.perf_counter() - started
                        if echo and beat and elapsed >= beat and not ended:
                            echo(f"... {elapsed:.0f} s, {now:,.0f} MB")
                            beat += heartbeat
                        for name, folder in folders.items():
                            peaks[name] = max(peaks[name], folder_mb(folder))
                        pending += lines.read()
                        *complete, pending = pending.split("\n")
                        for line in complete if echo else []:
                            echo(line)
                        if ended:
                            if pending and echo:
                                echo(pending)
                            return
                        stop.wait(every)

            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
            wall = time.perf_counter() - started
            stop.set()
            poller.join()
        with open(out_path) as out, open(err_path) as err:
            stdout, stderr = out.read(), err.read()
    return {
        "returncode": child.returncode,
        "stdout": stdout,
        "stderr": stderr,
        "wall_seconds": wall,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,  # kilobytes on Linux
        "peak_tree_rss_mb": peaks.pop("tree"),
        "peak_disk_mb": peaks,
    }


def results_file(out: Path, script: str) -> Path:
    """Where a bench script writes its results: `<out>/<script>.json`, `out` a folder (every script's
    `--out`, default bench/out), made now; refused before anything is measured when `out` is a file.

    >>> results_file(Path("/tmp/bench-out"), "eval_speed").name
    'eval_speed.json'
    """
    if out.exists() and not out.is_dir():
        raise SystemExit(f"--out {out}: is a file; --out names a folder (the results go to {script}.json in it)")
    out.mkdir(parents=True, exist_ok=True)
    return out / f"{script}.json"


def markers(script: str) -> tuple[str, str]:
    """The begin and end markers of a bench script's section of docs/performance.md (`script`: its file name).

    >>> markers("eval_speed.py")[0]
    '<!-- bench/eval_speed.py: begin -->'
    """
    return f"<!-- bench/{script}: begin -->", f"<!-- bench/{script}: end -->"


def add_write_docs_option(parser: argparse.ArgumentParser) -> None:
    """Every bench script's `--write-docs` (and `--readme`, its old name, which now does the same): rewrite
    the script's section of docs/performance.md between its markers (args.write_docs)."""
    parser.add_argument(
        "--write-docs",
        "--readme",
        dest="write_docs",
        action="store_true",
        help=f"rewrite this script's section of {PERFORMANCE.relative_to(ROOT)} between its markers "
        "(--readme: the old name, the same)",
    )


def rewrite_section(page: Path, script: str, text: str) -> None:
    """Replace what is between the markers of `script` (markers) in `page` by `text`; refused, with nothing
    written, unless the page has one begin line and, after it, one end line."""
    begin, end = markers(script)
    content = page.read_text()
    if content.count(begin) != 1 or content.count(end) != 1 or content.index(begin) > content.index(end):
        raise SystemExit(f"{page}: needs one line {begin} and, after it, one line {end}")
    head, rest = content.split(begin)
    _, tail = rest.split(end)
    page.write_text(f"{head}{begin}\n{text}{end}{tail}")


def machine() -> dict:
    """Where figures were measured: the date, rankhouse's commit, cores, memory and the load average."""
    import datetime

    try:
        commit = (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, timeout=60
            ).stdout.strip()
            or "unknown"
        )
    except (OSError, subprocess.TimeoutExpired):
        commit = "unknown"
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) * 1024
    return {
        "date": datetime.date.today().isoformat(), "commit": commit, "cores": os.cpu_count(),
        "memory_gb": round(memory / 2**30, 1), "load_average": os.getloadavg()[0],
    }  # fmt: skip
