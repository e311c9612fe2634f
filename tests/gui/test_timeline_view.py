"""The Step timeline tab: lanes per stream, critical path, exposed communication, live what-ifs, inline errors."""

from __future__ import annotations

import pytest

from workbench.examples import load_example
from workbench.gui.timeline_view import TimelineView

# The example step on an H100 SXM (hand calculation in tests/test_steps.py):
G = 2 * 8192**3 / 989e12  # one 8192³ BF16 GEMM
A = 2 * 7 / 8 * 2**28 / 450e9  # one 2**27 BF16 all-reduce over NVLink 4, per direction
X = 3 * 2**28 * 4 / 3.35e12  # axpy over 2**28 FP32


def show_example(window, qtbot) -> TimelineView:  # type: ignore[no-untyped-def]
    window.document.replace_session(load_example("data-parallel-step"))
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    qtbot.waitUntil(lambda: view.timeline is not None)
    return view


def test_example_step_is_drawn(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    assert view.timeline.step_time == pytest.approx(3 * G + A + X)
    assert "Step time 5.341 ms" in view.summary.text()
    assert "fwd → bwd1 → bwd2 → ar2 → opt" in view.summary.text()
    assert "exposed 1.044 ms" in view.summary.text()
    assert view.table.rowCount() == 6
    assert view.plot.getAxis("left")._tickLevels[0] == [(0, "compute"), (1, "comm")]
    assert not view.error.isVisible()


def test_what_if_updates_the_step_time_live(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    spin = view.table.cellWidget(5, 4)  # opt
    assert spin.objectName() == "speedup_opt"
    spin.setValue(4.0)
    # opt 4× faster: 3G + A + X/4 = 3.335 + 1.044 + 0.240 = 4.6195 ms, shown to 4 digits
    assert view.timeline.step_time == pytest.approx(3 * G + A + X / 4)
    assert "Step time 4.62 ms" in view.summary.text() and "was 5.341 ms" in view.summary.text()
    # The what-if columns follow: ar2 free now gives 3G + X/4 = 3.5756 ms.
    assert view.table.item(4, 6).text() == "3.576 ms"
    assert view.table.item(5, 2).text() == "240.4 µs"
    spin.setValue(1.0)
    assert view.timeline.step_time == pytest.approx(3 * G + A + X)


def test_bad_step_shows_inline_and_undoes(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = show_example(window, qtbot)
    good = view.editor.toPlainText()
    lines = good.splitlines(keepends=True)
    assert lines[5].startswith("ar2")
    lines[5] = lines[5].replace("ranks=8", "rank=8")
    bad = "".join(lines)
    view.editor.setPlainText(bad)
    qtbot.waitUntil(lambda: view.error.isVisible())
    assert view.error.text().startswith("line 6: ar2: allreduce has no field 'rank'")
    assert window.document.session.steps[0].text == bad  # stored in the session, as typed
    window.document.undo_stack.undo()
    qtbot.waitUntil(lambda: not view.error.isVisible())
    assert window.document.session.steps[0].text == good
    assert view.editor.toPlainText() == good


def test_session_without_a_step_says_so(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    qtbot.waitUntil(lambda: "No step yet" in view.summary.text())
    assert view.table.rowCount() == 0
