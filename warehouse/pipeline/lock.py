"""One writer at a time: the build lock beside the published warehouse.

``<db>.lock`` is an OS file lock (``filelock``: ``flock`` on POSIX), so the kernel releases it when
the holder dies, however it dies (SIGKILL included): a lock can never outlive its build. Beside it,
``<db>.lock.json`` records who holds it (PID, host, start time, command), written atomically after
the lock is taken and removed when it is released.

* A second build finds the lock taken and refuses at once, naming the running build's PID, host,
  start time and command, or waits up to ``wait_s`` seconds (``tastebench build --wait``).
* A build killed before it could release leaves its record behind (the lock itself is already
  free). The next build takes the lock, finds the record and says what it cleared: the PID is gone
  (same host), or, if the PID exists again, that it now belongs to another process (the OS lock
  was free, so it is not a build of ours).

Readers never take this lock: they open the published file read-only, which the build never
writes (it builds a separate file and swaps it in with ``os.replace``).
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from warehouse.errors import WarehouseError
from warehouse.files import atomic_text


class BuildLocked(WarehouseError):
    """Another build holds the lock (and ``--wait`` did not outlast it)."""


@dataclass(frozen=True)
class LockHolder:
    pid: int
    host: str
    started_at: str
    command: str

    @classmethod
    def current(cls, command: str | None = None) -> LockHolder:
        return cls(
            pid=os.getpid(),
            host=socket.gethostname(),
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            command=command or shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        )

    def describe(self) -> str:
        return f"PID {self.pid} on {self.host}, started {self.started_at} (command: {self.command})"


def lock_paths(db_path: Path) -> tuple[Path, Path]:
    """The OS lock file and the holder record beside the published warehouse ``db_path``."""
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + ".lock"), db_path.with_name(db_path.name + ".lock.json")


def read_holder(db_path: Path) -> LockHolder | None:
    """The recorded holder (None when no record, or an unreadable one)."""
    record = lock_paths(db_path)[1]
    try:
        values = json.loads(record.read_text(encoding="utf-8"))
        return LockHolder(**{k: values[k] for k in ("pid", "host", "started_at", "command")})
    except (OSError, ValueError, KeyError, TypeError):
        return None


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists on this host (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def is_locked(db_path: Path) -> bool:
    """Whether a build holds the lock right now (tries it without waiting)."""
    from filelock import FileLock, Timeout

    lock_file = lock_paths(db_path)[0]
    if not lock_file.exists():
        return False
    probe = FileLock(str(lock_file), timeout=0)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    probe.release()
    return False


class BuildLock:
    """Context manager: hold the build lock of ``db_path`` for the duration of a build."""

    def __init__(
        self,
        db_path: Path,
        wait_s: float = 0,
        log: Callable[[str], None] = print,
        command: str | None = None,
    ) -> None:
        self.db_path = Path(db_path)
        self.lock_file, self.record_file = lock_paths(self.db_path)
        if wait_s < 0:
            raise WarehouseError(
                f"--wait must be zero or positive seconds, got {wait_s:g}. Fix: pass how long to "
                "wait for a running build, e.g. --wait 600 (0 refuses at once)."
            )
        self.wait_s = float(wait_s)
        self.log = log
        self.command = command
        self.holder: LockHolder | None = None
        self.cleared: LockHolder | None = None
        self._lock = None

    def _refusal(self, waited: bool) -> BuildLocked:
        holder = read_holder(self.db_path)
        who = holder.describe() if holder else "a process that has not written its record yet"
        if waited:
            return BuildLocked(
                f"another build still holds {self.lock_file} after waiting {self.wait_s:g} s: "
                f"{who}. Fix: wait longer (--wait SECONDS) or, if that build is stuck, stop that "
                "process; the published warehouse stays readable meanwhile."
            )
        return BuildLocked(
            f"another build is running: {who}; it holds {self.lock_file}. Fix: wait for it "
            "(tastebench build --wait SECONDS) or, if it is stuck, stop that process; the "
            "published warehouse stays readable meanwhile."
        )

    def acquire(self) -> BuildLock:
        from filelock import FileLock, Timeout

        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.lock_file), timeout=0)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if self.wait_s <= 0:
                raise self._refusal(waited=False) from None
            holder = read_holder(self.db_path)
            who = holder.describe() if holder else "another build"
            self.log(f"waiting up to {self.wait_s:g} s for {who}")
            try:
                lock.acquire(timeout=self.wait_s, poll_interval=0.2)
            except Timeout:
                raise self._refusal(waited=True) from None
        self._lock = lock
        self.cleared = read_holder(self.db_path)
        if self.cleared is not None:
            self.log(self._stale_message(self.cleared))
        self.holder = LockHolder.current(self.command)
        atomic_text(self.record_file, json.dumps(asdict(self.holder), indent=1) + "\n")
        return self

    def _stale_message(self, stale: LockHolder) -> str:
        here = socket.gethostname()
        if stale.host != here:
            why = f"it was written on host {stale.host}, and the lock itself was free"
        elif pid_alive(stale.pid):
            why = f"PID {stale.pid} now belongs to another process (the lock itself was free)"
        else:
            why = f"process {stale.pid} is gone (killed or crashed before it could release)"
        return f"cleared a stale build lock: {stale.describe()}; {why}"

    def release(self) -> None:
        if self._lock is None:
            return
        current = read_holder(self.db_path)
        if current is not None and current == self.holder:
            self.record_file.unlink(missing_ok=True)
        self._lock.release()
        self._lock = None

    def __enter__(self) -> BuildLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
