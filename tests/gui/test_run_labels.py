"""Runs' labels on the plots (gui/measure_plots.labelled_marks): one per label text at one x, so thousands of runs of
a few declarations carry a few labels, not thousands stacked on each other."""

from __future__ import annotations

from workbench.gui.measure_plots import MeasuredMark, labelled_marks


def _mark(x: float, y: float, label: str) -> MeasuredMark:
    return MeasuredMark(x=x, y=y, low=y - 0.1, high=y + 0.1, valid=False, label=label, run=None)


def test_the_first_run_of_each_label_and_x_carries_the_label() -> None:
    marks = [_mark(x=float(index % 20), y=index / 1000, label="Generic CPU" if index % 3 else "invalid")
             for index in range(5000)]
    chosen = labelled_marks(marks)
    groups = {(mark.label, mark.x) for mark in marks}
    assert len(chosen) == len(groups) == 40
    assert {(mark.label, mark.x) for mark in chosen} == groups
    for mark in chosen:  # the first of its group, in the marks' order
        assert mark is next(other for other in marks if (other.label, other.x) == (mark.label, mark.x))


def test_marks_apart_or_with_other_labels_each_keep_theirs_and_unlabelled_marks_get_none() -> None:
    marks = [_mark(1.0, 1.0, "invalid"), _mark(1.5, 1.0, "invalid"), _mark(1.0, 2.0, "not checked"), _mark(2.0, 1.0, "")]
    assert labelled_marks(marks) == marks[:3]
