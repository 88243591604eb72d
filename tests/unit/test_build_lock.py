"""The build lock: one writer at a time, a clear refusal, waiting, stale locks of killed builds.

The other holder is a real second process (the lock is an OS lock between processes).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from warehouse.pipeline.lock import BuildLock, BuildLocked, is_locked, lock_paths, read_holder

HOLDER = """
import sys
from pathlib import Path
from warehouse.pipeline.lock import BuildLock
lock = BuildLock(Path(sys.argv[1]), log=lambda m: None, command="holder-process")
lock.acquire()
print("locked", flush=True)
sys.stdin.readline()          # hold until told (or killed)
lock.release()
print("released", flush=True)
"""


def _holder(db: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_build_refuses_naming_the_running_one(tmp_path: Path) -> None:
    db = tmp_path / "tastebench.duckdb"
    proc = _holder(db)
    try:
        holder = read_holder(db)
        assert holder is not None and holder.pid == proc.pid and holder.command == "holder-process"
        assert is_locked(db)
        with pytest.raises(BuildLocked) as err:
            BuildLock(db, log=lambda m: None).acquire()
        message = str(err.value)
        assert f"PID {proc.pid}" in message
        assert f"started {holder.started_at}" in message
        assert "--wait" in message
    finally:
        proc.communicate("go\n", timeout=30)
    assert not is_locked(db)
    assert not lock_paths(db)[1].exists(), "the record goes with the lock"


def test_wait_outlasts_the_running_build(tmp_path: Path) -> None:
    db = tmp_path / "tastebench.duckdb"
    proc = _holder(db)
    messages: list[str] = []
    waiting = threading.Event()

    def log(message: str) -> None:
        messages.append(message)
        if message.startswith("waiting up to"):
            waiting.set()

    acquired: list[BuildLock] = []
    thread = threading.Thread(
        target=lambda: acquired.append(BuildLock(db, wait_s=120, log=log).acquire())
    )
    thread.start()
    assert waiting.wait(60), messages
    assert f"PID {proc.pid}" in messages[0]
    assert not acquired, "acquired while the other build held the lock"
    proc.communicate("go\n", timeout=30)
    thread.join(60)
    assert acquired and read_holder(db).pid == os.getpid()
    acquired[0].release()


def test_wait_gives_up_with_the_holder_named(tmp_path: Path) -> None:
    db = tmp_path / "tastebench.duckdb"
    proc = _holder(db)
    try:
        with pytest.raises(BuildLocked, match=f"after waiting 0.5 s: PID {proc.pid}"):
            BuildLock(db, wait_s=0.5, log=lambda m: None).acquire()
    finally:
        proc.communicate("go\n", timeout=30)


def test_a_killed_build_leaves_a_stale_record_that_is_cleared(tmp_path: Path) -> None:
    db = tmp_path / "tastebench.duckdb"
    proc = _holder(db)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    stale = json.loads(lock_paths(db)[1].read_text())
    assert stale["pid"] == proc.pid
    messages: list[str] = []
    # wait_s=0: acquiring fails at once if the lock is held, so entering the block shows the
    # kernel released the killed holder's lock (no timing needed)
    with BuildLock(db, log=messages.append, wait_s=0):
        assert read_holder(db).pid == os.getpid()
    assert len(messages) == 1
    assert messages[0].startswith("cleared a stale build lock")
    assert f"PID {proc.pid}" in messages[0] and f"process {proc.pid} is gone" in messages[0]
