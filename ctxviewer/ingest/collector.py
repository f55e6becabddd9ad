"""The cyclic garbage collector, paused while a log is read.

A session is millions of small objects (records, blocks, requests), none of them
garbage until the read is done; the collector's passes over them cost a tenth to a
quarter of a read. Objects without cycles are still freed the moment they are
dropped. The pause nests (only the outermost one turns the collector back on) and
is process-wide: a read on a thread pauses it for the window's thread too, for as
long as the read lasts.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
