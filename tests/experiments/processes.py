"""Watching the processes a command starts, from /proc (psutil is not a dependency): for
the tests that stop a run and check that none of its worker processes is left."""

from __future__ import annotations

import time
from pathlib import Path


def descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (children, their children, ...), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone while listed
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def pool_workers(pid: int) -> set[int]:
    """The worker processes of ``pid``'s process pools (started by multiprocessing's
    ``spawn``; its resource tracker, also a child, is left out)."""
    found = set()
    for child in descendants(pid):
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.add(child)
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    """Running or stopped, not gone and not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition, seconds: float) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` pass (a guard against a hang, not a
    speed); whether it holds at the end."""
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)
    return condition()
