"""What every part of the timeline plot is: a layer fed by the core's view model.

``TimelinePlot`` (``plot``) is a host: it builds one layer per group of items
(``curves``, ``bars``, ``thresholds``, ``marks``, ``whatif``, ``pick``; the
legend is ``legend``) and hands each new ``analysis.timeline_view.view.TimelineView``
to all of them. A layer owns its pyqtgraph items and redraws only what is a new
object in the view (the view model shares the parts a change keeps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ctxviewer.analysis.timeline_view.view import TimelineView


class Layer(Protocol):
    def set_view(self, view: TimelineView, old: TimelineView | None) -> None:
        """Show ``view``; ``old`` is the view shown before (None at the first)."""


@dataclass
class Shown:
    """What the user chose to show (the menu's check marks); the host sets it, the
    layers that depend on it read it."""

    subagents: bool = True
    auxiliary: bool = False  # side calls: hidden by default
    cache: bool = False  # the prompt-cache bands
    output: bool = True
    whatif: bool = True
