"""Paths that are no place for a file: the kernel's and the devices' trees
(``/proc``, ``/sys``, ``/dev``), pipes, sockets and devices.

Reading ``/proc/kmsg`` blocks until the kernel logs something; opening a FIFO
for writing blocks until a reader comes. Every check here only looks at the
path and ``stat``: nothing is opened.
"""

from __future__ import annotations

import os
import stat
import sys

PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


def unusable_name(path: str) -> str | None:
    """Why ``path`` (a path taken from a log: data, not trusted) cannot name a file, in
    a few words, or None when it can. A NUL or a lone surrogate makes ``os.stat`` and
    ``open`` raise ``ValueError``/``UnicodeEncodeError`` instead of ``OSError``."""
    if not path:
        return "it is empty"
    if "\0" in path:
        return "it holds a NUL character"
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        return "it holds characters no file name can have"
    return None


def pseudo_root(path: str) -> str | None:
    """The kernel or device tree ``path`` lies in (links followed), or None."""
    if not sys.platform.startswith(("linux", "darwin", "freebsd")):
        return None
    real = os.path.realpath(os.path.expanduser(path))
    for root in PSEUDO_ROOTS:
        if real == root or real.startswith(root + "/"):
            return root
    return None


def kind(mode: int) -> str:
    """What a non-regular file is, in words: ``a pipe``, ``a socket``, ``a device``..."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def write_refusal(path: str) -> str | None:
    """Why ``path`` cannot take a file we write, in one sentence, or None when it can
    (a regular file, or nothing yet)."""
    root = pseudo_root(path)
    if root is not None:
        return (
            f"{path} is in {root}, the system's {'kernel' if root != '/dev' else 'device'} "
            "files, not a place to save to: choose a file in an ordinary folder"
        )
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot use {path}: {e.strerror or e}"
    if stat.S_ISREG(mode):
        return None
    return f"{path} is {kind(mode)}, not a file: choose a file in an ordinary folder"
