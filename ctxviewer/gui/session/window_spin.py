"""The Window box of the toolbar: ``auto`` or a context window size in tokens.

The arrows and PgUp/PgDn step through the sizes agents really use (8k ... 2M),
not by 1,000 tokens: one click from ``auto`` is the smallest real window, not
a 1,000-token one that fills the bar many times over. ``auto`` can be typed
(or the box emptied) to go back to the agent's own window; ``200k``, ``1M``
and ``131,072`` are read as sizes.
"""

from __future__ import annotations

import bisect
import re

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox, QWidget

MAX_WINDOW = 100_000_000
# Windows agents and models use (tokens), smallest first; 0 is "auto".
SIZES = (
    8_192,
    16_384,
    32_768,
    65_536,
    128_000,
    131_072,
    200_000,
    256_000,
    262_144,
    272_000,
    400_000,
    1_000_000,
    1_048_576,
    2_000_000,
)
AUTO = "auto"
_SIZE = re.compile(r"^\s*(\d[\d,. _]*)\s*([kKmM]?)\s*$")


def parse_window(text: str) -> int | None:
    """Tokens for ``text`` ("auto" or empty: 0; "200k", "1M", "131,072"), None if not one."""
    t = text.strip().lower()
    if t in ("", AUTO):
        return 0
    m = _SIZE.match(t)
    if not m:
        return None
    digits, unit = m.group(1).replace(",", "").replace(" ", "").replace("_", ""), m.group(2)
    try:
        value = float(digits) if unit else int(digits.replace(".", ""))
    except ValueError:
        return None
    value *= {"": 1, "k": 1_000, "m": 1_000_000}[unit.lower()]
    return int(value) if 0 <= value <= MAX_WINDOW else None


class WindowSpinBox(QSpinBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(0, MAX_WINDOW)
        self.setGroupSeparatorShown(True)
        self.setSpecialValueText(AUTO)
        self.setKeyboardTracking(False)  # one change per edit, not per digit
        self.setToolTip(
            "Context window size in tokens: auto (the one the agent uses, from "
            "its profile or the log), or a size such as 200k or 1M. The arrows "
            "step through the windows agents use."
        )

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt's name
        value = self.value()
        for _ in range(abs(steps)):
            value = _next_size(value, steps > 0)
        self.setValue(value)
        self.selectAll()

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:  # noqa: D102
        t = text.strip().lower()
        if AUTO.startswith(t) or parse_window(text) is not None:
            return (
                QValidator.State.Acceptable
                if parse_window(text) is not None
                else QValidator.State.Intermediate,
                text,
                pos,
            )
        if re.fullmatch(r"[\d,. _]*[kKmM]?", t):
            return QValidator.State.Intermediate, text, pos
        return QValidator.State.Invalid, text, pos

    def valueFromText(self, text: str) -> int:  # noqa: N802 - Qt's name
        value = parse_window(text)
        return self.value() if value is None else value

    def fixup(self, text: str) -> str:
        return text if parse_window(text) is not None else AUTO


def _next_size(value: int, up: bool) -> int:
    """The next real window size above (or below) ``value``; 0 (auto) below the smallest."""
    if up:
        i = bisect.bisect_right(SIZES, value)
        return SIZES[i] if i < len(SIZES) else value
    i = bisect.bisect_left(SIZES, value)
    return SIZES[i - 1] if i > 0 else 0
