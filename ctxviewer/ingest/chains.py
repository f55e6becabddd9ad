"""Records chained by ``parentUuid`` (Claude Code, qwen-code): cycles are damage.

A record that is its own parent, or the ancestor of its parent, would make every
walk up its chain endless. The readers cut such a link where it would close the
cycle: the record starts a chain of its own, and is counted as skipped with
``CYCLE`` as the reason.
"""

from __future__ import annotations

from collections.abc import Callable

CYCLE = "its parentUuid closes a cycle of records (damage): the link is cut there"


class Links:
    """The uuids records hang off, to test a new link for a cycle at little cost."""

    __slots__ = ("referenced",)

    def __init__(self) -> None:
        self.referenced: set[str] = set()

    def add(self, parent: str | None) -> None:
        if parent is not None:
            self.referenced.add(parent)

    def closes_cycle(self, uuid: str, parent: str, parent_of: Callable[[str], str | None]) -> bool:
        """True when ``uuid`` is ``parent`` or one of its ancestors (``parent_of`` gives
        a record's parent, None at a root or an unknown record). Only a record something
        already hangs off (named as a parent before it came, or seen again elsewhere) can
        close a cycle, so most records cost one set lookup."""
        if parent == uuid:
            return True
        if uuid not in self.referenced or parent_of(uuid) == parent:
            return False  # nothing hangs off it yet, or a record seen again as it was
        seen: set[str] = set()
        at: str | None = parent
        while at is not None and at not in seen:
            if at == uuid:
                return True
            seen.add(at)
            at = parent_of(at)
        return False
