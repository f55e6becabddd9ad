"""The Window box: real window sizes per step, ``auto`` typable, sizes like 200k, and an
override that stays with the file it was made for."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from ctxviewer.gui.session.window_spin import SIZES, parse_window


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("auto", 0),
        ("AUTO", 0),
        ("", 0),
        ("200k", 200_000),
        ("1M", 1_000_000),
        ("1.5M", 1_500_000),
        ("131,072", 131_072),
        ("64000", 64_000),
        ("abc", None),
        ("-5", None),
        ("200x", None),
        ("999M", None),
    ],
)
def test_parse_window(text: str, value: int | None) -> None:
    assert parse_window(text) == value


def test_arrows_step_through_real_window_sizes(qtbot, window) -> None:
    spin = window.controls.window_spin
    assert spin.text() == "auto"
    spin.setFocus()
    steps = []
    for _ in range(len(SIZES) + 1):  # past the largest it stays there
        qtbot.keyClick(spin, Qt.Key.Key_Up)
        steps.append(spin.value())
    assert steps == [*SIZES, SIZES[-1]]
    for _ in range(len(SIZES)):
        qtbot.keyClick(spin, Qt.Key.Key_Down)
    assert spin.value() == 0 and spin.text() == "auto"
    spin.setValue(150_000)  # between two sizes: the next one up, the next one down
    spin.stepBy(1)
    assert spin.value() == 200_000
    spin.setValue(150_000)
    spin.stepBy(-1)
    assert spin.value() == 131_072


def test_typing_sizes_and_auto(qtbot, window, open_and_wait, trace_path) -> None:
    open_and_wait(window, trace_path)
    spin = window.controls.window_spin
    spin.setFocus()
    spin.selectAll()
    with qtbot.waitSignal(window.state.analysis_changed, timeout=20000):
        qtbot.keyClicks(spin, "300k")
        qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert window.state.analysis.window == 300_000 and spin.text() == "300,000"
    spin.selectAll()
    with qtbot.waitSignal(window.state.analysis_changed, timeout=20000):
        qtbot.keyClicks(spin, "auto")
        qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert window.state.options.window == 0 and spin.text() == "auto"
    assert window.state.analysis.window != 300_000


def test_a_window_override_stays_with_its_file(
    qtbot, window, open_and_wait, trace_path, transcript_path
) -> None:
    open_and_wait(window, trace_path)
    with qtbot.waitSignal(window.state.analysis_changed, timeout=20000):
        window.controls.window_spin.setValue(64_000)
    assert window.state.analysis.window == 64_000
    a = open_and_wait(window, transcript_path)
    assert a.window_override is None and a.window != 64_000
    assert window.state.options.window == 0
    assert window.controls.window_spin.text() == "auto"
