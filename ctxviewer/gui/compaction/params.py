"""An editable form of the compaction parameters, generated from the params dataclasses.

One group per parameter dataclass of ``Params`` (qwen, shannon, trim, slim);
``set_strategy`` shows the groups the strategy uses. Ints get a spin box,
floats a decimal one, an optional int (``None`` = automatic) a spin box whose
zero reads "auto". ``params()`` returns a new ``Params``; ``changed`` fires
on every edit.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QSpinBox,
    QWidget,
)

from ctxviewer.analysis.compaction import Params

GROUPS = {
    "qwen": ("qwen",),
    "shannon": ("shannon",),
    "trim": ("trim",),
    "slim": ("slim",),
    "slim+qwen": ("slim", "qwen"),
    "slim+shannon": ("slim", "shannon"),
}
TITLES = {"qwen": "qwen-code", "shannon": "Shannon", "trim": "Trim", "slim": "Slimming"}
BIG = 10_000_000


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _editor(default: Any, parent: QWidget) -> QAbstractSpinBox:
    if isinstance(default, float):
        box = QDoubleSpinBox(parent)
        box.setDecimals(3)
        box.setRange(0.0, 1.0 if default <= 1 else 1e6)
        box.setSingleStep(0.05)
        box.setValue(default)
        return box
    spin = QSpinBox(parent)
    spin.setRange(0, BIG)
    spin.setGroupSeparatorShown(True)
    if default is None:
        spin.setSpecialValueText("auto")
        spin.setValue(0)
    else:
        spin.setValue(int(default))
    return spin


class ParamsForm(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None, params: Params | None = None) -> None:
        super().__init__(parent)
        self._defaults = params or Params()
        self.groups: dict[str, QGroupBox] = {}
        self.editors: dict[str, dict[str, QAbstractSpinBox]] = {}
        self._optional: set[tuple[str, str]] = set()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for f in fields(Params):
            group = QGroupBox(TITLES.get(f.name, f.name), self)
            form = QFormLayout(group)
            form.setContentsMargins(6, 4, 6, 4)
            form.setVerticalSpacing(3)
            sub = getattr(self._defaults, f.name)
            self.editors[f.name] = {}
            for g in fields(sub):
                default = getattr(sub, g.name)
                if default is None:
                    self._optional.add((f.name, g.name))
                box = _editor(default, group)
                box.setObjectName(f"{f.name}.{g.name}")
                box.setToolTip(
                    f"{f.name}.{g.name} (default {default if default is not None else 'auto'})"
                )
                box.valueChanged.connect(self.changed)  # type: ignore[attr-defined]
                form.addRow(_label(g.name), box)
                self.editors[f.name][g.name] = box
            self.groups[f.name] = group
            layout.addWidget(group)
        layout.addStretch(1)

    def set_strategy(self, strategy: str) -> None:
        shown = GROUPS.get(strategy, ())
        for name, group in self.groups.items():
            group.setVisible(name in shown)

    def params(self) -> Params:
        out = self._defaults
        for group, editors in self.editors.items():
            values: dict[str, Any] = {}
            for name, box in editors.items():
                v = box.value()  # type: ignore[attr-defined]
                if (group, name) in self._optional:
                    v = int(v) or None
                elif isinstance(box, QSpinBox):
                    v = int(v)
                values[name] = v
            out = replace(out, **{group: replace(getattr(out, group), **values)})
        return out
