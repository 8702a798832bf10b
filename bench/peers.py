"""Shared by the speed scripts: run one peer in a fresh Python process, read its result and its peak memory."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile


def installed(module: str) -> bool:
    """Whether a peer's module can be imported here (a bench runs the peers it finds and names the others).

    >>> installed("json"), installed("no_such_peer")
    (True, False)
    """
    return importlib.util.find_spec(module) is not None


def run_child(script: str, *args: str) -> dict:
    """Run `python script --child *args` in a fresh process with an empty numba cache (so that ranx's
    first call compiles from scratch) and return the JSON object on its last line of output, with the
    process's peak resident memory as `peak_rss_mb` (its own rusage, read by wait4: the child's alone)."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as scratch:
        env["NUMBA_CACHE_DIR"] = os.path.join(scratch, "numba")
        out_path, err_path = os.path.join(scratch, "out"), os.path.join(scratch, "err")
        with open(out_path, "w") as out, open(err_path, "w") as err:
            child = subprocess.Popen([sys.executable, script, "--child", *args], stdout=out, stderr=err, env=env)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        with open(out_path) as out, open(err_path) as err:
            stdout, stderr = out.read(), err.read()
    if child.returncode:
        sys.exit(f"{script} --child {' '.join(args)} failed:\n{stderr}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = usage.ru_maxrss / 1024  # kilobytes on Linux
    return result
