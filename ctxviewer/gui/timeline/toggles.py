"""What the timeline shows: the actions of its context menu.

``TimelineMenu`` adds them to the view's context menu and keeps them as
``menu_actions`` (a toolbar or the View menu may reuse them): "Reset view",
then a check mark per toggle (``TOGGLES``). Each checked action calls the
plot's setter; ``sync`` puts a check mark in step with the plot without
calling it again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

# key, text, checked at start
TOGGLES = (
    ("time", "Time axis", False),
    ("cache", "Prompt-cache view", False),
    ("subagents", "Show sub-agents", True),
    ("auxiliary", "Show side calls", False),
    ("output", "Show output tokens", True),
    ("whatif", "Show what-if compactions", True),
)


class TimelineMenu:
    """The plot's menu actions (see the module docstring)."""

    def __init__(
        self, menu: QMenu, reset: Callable[[], None], setters: Mapping[str, Callable[[bool], None]]
    ) -> None:
        menu.addSeparator()
        self.menu_actions: dict[str, QAction] = {}
        self.menu_actions["reset"] = menu.addAction("Reset view")
        self.menu_actions["reset"].triggered.connect(reset)
        for key, text, checked in TOGGLES:
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(checked)
            action.toggled.connect(setters[key])
            self.menu_actions[key] = action

    def checked(self) -> dict[str, bool]:
        """The check marks, by key."""
        return {key: a.isChecked() for key, a in self.menu_actions.items() if a.isCheckable()}

    def set_checked(self, toggles: Mapping[str, bool]) -> None:
        """Tick the actions as ``toggles`` says (unknown keys ignored): their setters run."""
        for key, on in toggles.items():
            action = self.menu_actions.get(key)
            if action is not None and action.isCheckable():
                action.setChecked(on)

    def sync(self, key: str, on: bool) -> None:
        """The check mark of ``key`` to ``on``, without calling its setter."""
        action = self.menu_actions.get(key)
        if action is not None and action.isChecked() != bool(on):
            action.blockSignals(True)
            action.setChecked(bool(on))
            action.blockSignals(False)
