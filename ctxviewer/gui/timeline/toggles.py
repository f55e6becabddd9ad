"""What the timeline shows: the context menu's actions and the show/hide setters.

``TogglesMixin`` is mixed into ``TimelinePlot`` (before ``pg.PlotWidget``). It
builds ``menu_actions`` (the view's context menu; a toolbar may reuse them)
and holds the setters they call: ``set_x_mode``, ``set_show_subagents``,
``set_show_auxiliary``, ``set_cache_view``, ``set_show_output`` and
``set_show_whatif``. Each setter keeps its menu action's check mark in step
with the plot; it reads and updates the plot's items, flags and legend.
"""

from __future__ import annotations

from PySide6.QtGui import QAction

from ctxviewer.gui.timeline import data as td


class TogglesMixin:
    """Menu actions and visibility setters of ``TimelinePlot`` (see the module docstring)."""

    def _setup_menu(self) -> None:
        """Actions of the view's context menu; ``menu_actions`` lets a toolbar reuse them."""
        menu = self.getPlotItem().vb.menu
        menu.addSeparator()
        self.menu_actions: dict[str, QAction] = {}
        self.menu_actions["reset"] = menu.addAction("Reset view")
        self.menu_actions["reset"].triggered.connect(self.reset_view)
        toggles = (("time", "Time axis", self._toggle_time, False),
                   ("cache", "Prompt-cache view", self.set_cache_view, False),
                   ("subagents", "Show sub-agents", self.set_show_subagents, True),
                   ("auxiliary", "Show side calls", self.set_show_auxiliary, False),
                   ("output", "Show output tokens", self.set_show_output, True),
                   ("whatif", "Show what-if compactions", self.set_show_whatif, True))
        for key, text, slot, checked in toggles:
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(checked)
            action.toggled.connect(slot)
            self.menu_actions[key] = action

    def set_x_mode(self, mode: str) -> str:
        """``"index"`` or ``"time"``; returns the mode in use (index without timestamps)."""
        if mode not in td.X_MODES:
            raise ValueError(f"x_mode must be one of {td.X_MODES}, not {mode!r}")
        self.x_mode = mode
        if self.thresholds is not None:
            source = self._source
            self.set_timeline(self.points, self.thresholds, self.events)
            self._source = source
        self.menu_actions["time"].blockSignals(True)
        # no session yet: the mode asked for (kept for the next start); else the one in use
        self.menu_actions["time"].setChecked(
            (mode if self.thresholds is None else self.data.x_mode) == "time")
        self.menu_actions["time"].blockSignals(False)
        return self.data.x_mode

    def toggles(self) -> dict[str, bool]:
        """What the menu's check marks ask for (the time axis: as asked, even when a
        session without timestamps falls back to request numbers)."""
        out = {key: a.isChecked() for key, a in self.menu_actions.items() if a.isCheckable()}
        out["time"] = self.x_mode == "time"
        return out

    def set_toggles(self, toggles: dict[str, bool]) -> None:
        """Tick the menu's actions as ``toggles`` says (unknown keys ignored)."""
        for key, on in toggles.items():
            action = self.menu_actions.get(key)
            if action is not None and action.isCheckable():
                action.setChecked(on)

    def _toggle_time(self, on: bool) -> None:
        self.set_x_mode("time" if on else "index")

    def set_show_subagents(self, show: bool) -> None:
        self.show_subagents = bool(show)
        self.subagent_scatter.setVisible(self.show_subagents)
        self._update_legend()
        self._sync_action("subagents", show)
        self._refresh_selection()
        if self._auto_view:
            self.reset_view()

    def set_show_auxiliary(self, show: bool) -> None:
        self.show_auxiliary = bool(show)
        self.auxiliary_scatter.setVisible(self.show_auxiliary)
        self._update_legend()
        self._sync_action("auxiliary", show)
        self._refresh_selection()
        if self._auto_view:
            self.reset_view()

    def set_cache_view(self, on: bool) -> None:
        """Stacked cache read / cache write / uncached areas under the curves."""
        self.cache_view = bool(on)
        for item in self.cache_areas.values():
            item.setVisible(self.cache_view)
        self.output_curve.setOpts(brush=self.output_brushes[self.cache_view])
        self._update_legend()
        self._sync_action("cache", on)

    def set_show_output(self, show: bool) -> None:
        self.show_output = bool(show)
        self.output_curve.setVisible(self.show_output)
        self.getPlotItem().showAxis("right", self.show_output)
        self._update_legend()
        self._sync_action("output", show)

    def set_show_whatif(self, show: bool) -> None:
        self.show_whatif = bool(show)
        self.whatif_markers.setVisible(self.show_whatif)
        self.whatif_curve.setVisible(self.show_whatif)
        self._update_legend()
        self._sync_action("whatif", show)

    def _sync_action(self, key: str, on: bool) -> None:
        action = getattr(self, "menu_actions", {}).get(key)
        if action is not None and action.isChecked() != bool(on):
            action.blockSignals(True)
            action.setChecked(bool(on))
            action.blockSignals(False)
