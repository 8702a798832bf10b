"""Shared by the speed scripts: run one peer in a fresh Python process and read its result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile


def run_child(script: str, *args: str) -> dict:
    """Run `python script --child *args` in a fresh process with an empty numba cache (so that ranx's
    first call compiles from scratch) and return the JSON object on its last line of output."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as numba_cache:
        env["NUMBA_CACHE_DIR"] = numba_cache
        done = subprocess.run(
            [sys.executable, script, "--child", *args], capture_output=True, text=True, env=env, check=False
        )
    if done.returncode:
        sys.exit(f"{script} --child {' '.join(args)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])
