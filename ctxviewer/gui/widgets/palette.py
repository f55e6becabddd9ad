"""Colours of the breakdown categories and threshold tiers, for every view.

One place decides what "MCP tools" or "warn" look like, so the bar, its
legend, the tree and the request list always agree. Each colour has a light
and a dark variant; ``is_dark`` picks by the window background of a palette.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

# category -> (light theme, dark theme)
_CATEGORY: dict[str, tuple[str, str]] = {
    "system_prompt": ("#7b61c9", "#9d86e9"),
    "unrecorded_overhead": ("#8e7cc3", "#a996e0"),
    "builtin_tools": ("#3b82d6", "#5fa2ef"),
    "mcp_tools": ("#129d8f", "#2fc1b0"),
    "skills": ("#e08a1e", "#f2a440"),
    "memory_files": ("#d2487f", "#ec6a9c"),
    "startup_context": ("#a0785a", "#c49a78"),
    "messages": ("#4a9a3f", "#68bb5a"),
    "unattributed": ("#8a8f96", "#9aa1a9"),
    "free_space": ("#d9dee5", "#3a3f45"),
    "autocompact_buffer": ("#b9bec6", "#5b626b"),
}
_FALLBACK = ("#9e9e9e", "#7a7a7a")

# tier -> (light, dark): strong colour for marks, soft colour for row backgrounds
_TIER: dict[str, tuple[str, str]] = {
    "safe": ("#3c9a4b", "#5cc46b"),
    "warn": ("#d9a400", "#f0c030"),
    "auto": ("#e0701b", "#f58f3e"),
    "hard": ("#d03b3b", "#f06060"),
}
_TIER_SOFT: dict[str, tuple[str, str]] = {
    "safe": ("#e4f3e6", "#233a27"),
    "warn": ("#fbf0c8", "#4a3f12"),
    "auto": ("#fde0c8", "#4d3016"),
    "hard": ("#f9d2d2", "#552424"),
}


def is_dark(palette: QPalette | None = None) -> bool:
    """True when the window background of ``palette`` (default: the app's) is dark."""
    if palette is None:
        palette = QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightnessF() < 0.5


def category_color(name: str, dark: bool = False) -> QColor:
    light, dark_ = _CATEGORY.get(name, _FALLBACK)
    return QColor(dark_ if dark else light)


def tier_color(tier: str, dark: bool = False) -> QColor:
    light, dark_ = _TIER.get(tier, _FALLBACK)
    return QColor(dark_ if dark else light)


def tier_background(tier: str, dark: bool = False) -> QColor:
    """A soft tint for the background of a row in ``tier``."""
    light, dark_ = _TIER_SOFT.get(tier, _FALLBACK)
    return QColor(dark_ if dark else light)


def text_on(background: QColor) -> QColor:
    """Black or white, whichever reads better on ``background``."""
    r, g, b = background.redF(), background.greenF(), background.blueF()
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return QColor("#111111") if luminance > 0.5 else QColor("#ffffff")


def dark_palette() -> QPalette:
    """A dark Fusion palette (used by ``--theme dark`` and the dark-theme tests)."""
    p = QPalette()
    role = QPalette.ColorRole
    colors = {
        role.Window: "#26292d",
        role.WindowText: "#e6e6e6",
        role.Base: "#1e2023",
        role.AlternateBase: "#2b2e33",
        role.ToolTipBase: "#33373c",
        role.ToolTipText: "#e6e6e6",
        role.Text: "#e6e6e6",
        role.Button: "#30343a",
        role.ButtonText: "#e6e6e6",
        role.BrightText: "#ff6060",
        role.Highlight: "#3d7fd1",
        role.HighlightedText: "#ffffff",
        role.Link: "#6fb0ff",
        role.PlaceholderText: "#8a8f96",
        role.Mid: "#45494f",
        role.Dark: "#17191b",
        role.Light: "#3b3f45",
        role.Midlight: "#34383d",
        role.Shadow: "#0b0c0d",
    }
    for r, c in colors.items():
        p.setColor(r, QColor(c))
    disabled = QPalette.ColorGroup.Disabled
    for r in (role.Text, role.WindowText, role.ButtonText):
        p.setColor(disabled, r, QColor("#7a7f86"))
    return p
