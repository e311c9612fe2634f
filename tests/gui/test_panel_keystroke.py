"""What a keystroke in the declaration asks of the Analysis panel: the same content as a fresh render, with the
least work Qt can do for it (counted here, not timed; benchmarks/bench_gui.py times the whole keystroke).

- The derivation is retexted in place where its shape is unchanged, and the document is then the one setHtml
  makes of the new HTML (text and formats); another shape, or a text HTML would not show as it is, sets it afresh.
- The figures and the declaration are selectable with the mouse, but a keystroke builds no text document for them.
- The tensor table hears of a keystroke's changed cells once.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QApplication, QTextBrowser

from workbench.gui.document import Document
from workbench.gui.derivation_view import DerivationView, RichText
from workbench.gui.panel import AnalysisPanel

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
TILED = "gemm(M=4096, N=4096, K=4096, dtype=fp32, impl=tiled, tile_m=128, tile_n=128, tile_k=32)"


class _Events(QObject):
    """Counts the events of one type that reach the objects it filters."""

    def __init__(self, kind: QEvent.Type) -> None:
        super().__init__()
        self.kind = kind
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == self.kind:
            self.count += 1
        return False


def _properties(text_format: QTextFormat) -> dict[int, object]:
    """A format's properties but for the index of its list or table (the document's own numbering)."""
    properties = dict(text_format.properties())
    properties.pop(int(QTextFormat.Property.ObjectIndex.value), None)
    return properties


def _content(document: QTextDocument) -> list[tuple[object, ...]]:
    """Every paragraph: its text, format, list and table membership, and each run's text and format."""
    paragraphs = []
    block = document.begin()
    while block.isValid():
        runs = []
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            runs.append((fragment.text(), _properties(fragment.charFormat())))
            it += 1
        table = QTextCursor(block).currentTable()
        cell = table.cellAt(block.position()) if table is not None else None
        paragraphs.append((
            block.text(),
            _properties(block.blockFormat()),
            _properties(block.charFormat()),
            block.textList() is not None,
            (cell.row(), cell.column()) if cell is not None else None,
            runs,
        ))
        block = block.next()
    return paragraphs


def _assert_shows_as_set_afresh(view: DerivationView, text: RichText) -> None:
    fresh = QTextBrowser()
    fresh.setFont(view.font())
    fresh.setHtml(text.html)
    assert view.toPlainText() == fresh.toPlainText()
    assert _content(view.document()) == _content(fresh.document())
    assert view.document().toHtml() == fresh.document().toHtml()


def _counting_set_html(view: DerivationView, monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    original = view.setHtml
    monkeypatch.setattr(view, "setHtml", lambda html: (calls.append(html), original(html)))
    return calls


def test_the_derivation_retexted_in_place_is_what_a_fresh_render_shows(derivation_texts, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Edits that keep the derivation's shape (the GEMM's sizes; a tiled kernel with its logical-versus-physical
    table) are made in place, edit after edit, and the document equals setHtml's of the same HTML each time, in
    text, paragraph and run formats, lists and table cells."""
    view = DerivationView()
    qtbot.addWidget(view)
    view.resize(500, 400)
    view.show()
    for family in (
        [GEMM, "gemm(M=40961, N=4096, K=4096, dtype=fp16)", "gemm(M=4096, N=40961, K=4095, dtype=fp16)", GEMM],
        [TILED, TILED.replace("M=4096", "M=40961"), TILED.replace("K=4096", "K=1000"), TILED],
    ):
        texts = derivation_texts(family)
        assert len({text.shape for text in texts}) == 1, "the sizes change the figures, not the derivation's shape"
        assert len(set(texts)) == len(family) - 1  # the last declaration is the first again
        set_afresh = _counting_set_html(view, monkeypatch)
        for text in texts:
            view.show_rich_text(text)
            _assert_shows_as_set_afresh(view, text)
        assert len(set_afresh) == 1, "only the first of a family is set afresh"
        monkeypatch.undo()
    assert "<table" in texts[0].html and "Physical" in view.toPlainText()


def test_another_shape_or_a_text_html_would_change_sets_the_derivation_afresh(derivation_texts, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Another kind of operation (other steps and notes) is set with setHtml; so is a text of the same shape that
    HTML would not show as it is (white space it collapses), and then the shape is set afresh until a render
    shows its texts as they are again."""
    view = DerivationView()
    qtbot.addWidget(view)
    gemm, add = derivation_texts([GEMM, "add(n=2**24, dtype=fp32)"])
    set_afresh = _counting_set_html(view, monkeypatch)
    for text in (gemm, add, gemm):
        view.show_rich_text(text)
        _assert_shows_as_set_afresh(view, text)
    assert len(set_afresh) == 3

    spaced = RichText(gemm.markup, (gemm.texts[0] + "  (two spaces)",) + gemm.texts[1:])
    assert spaced.shape == gemm.shape
    view.show_rich_text(spaced)
    _assert_shows_as_set_afresh(view, spaced)
    assert len(set_afresh) == 4 and view._places is None, "HTML collapsed the spaces: the texts are not where they were"
    view.show_rich_text(gemm)
    _assert_shows_as_set_afresh(view, gemm)
    assert len(set_afresh) == 5 and view._places is not None
    for awkward in (" leading space", "trailing space ", "a\ttab", "a line\nbreak", "no-break\u00a0space", "soft\u00adhyphen", ""):
        changed = RichText(gemm.markup, gemm.texts[:1] + (awkward,) + gemm.texts[2:])
        before = len(set_afresh)
        view.show_rich_text(changed)
        _assert_shows_as_set_afresh(view, changed)
        assert len(set_afresh) == before + 1, repr(awkward)
        view.show_rich_text(gemm)
        _assert_shows_as_set_afresh(view, gemm)

    # A cell that does not wrap shows its spaces as no-break spaces: a text with spaces where the one shown had
    # none cannot say which it will get, and is set afresh; one with spaces where the one shown had some is not.
    cell = ("<table><tr><td style='white-space:nowrap'>", "</td><td>", "</td></tr></table>")
    for texts, afresh in (
        (("1,024", "x"), True),  # another shape
        (("1 024", "x y"), True),  # spaces where there were none
        (("2 048", "x z"), False),
        (("4,096", "x z"), False),
        (("4 096", "x"), False),
    ):
        before = len(set_afresh)
        view.show_rich_text(RichText(cell, texts))
        _assert_shows_as_set_afresh(view, RichText(cell, texts))
        assert len(set_afresh) == before + afresh, texts


def _type(line, keys: list[Qt.Key]) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtTest import QTest

    for key in keys:
        QTest.keyClick(line, key)
        QApplication.processEvents()


def test_the_derivation_scroll_bar_repaints_only_when_the_derivation_changes_height(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """An edit that leaves the derivation as tall as it was (K=4096 ↔ 4097, usually: the same lines) repaints the changed
    paragraphs, not the scroll bar beside them; one that makes it taller or shorter (a longer M, whose figures wrap
    onto another line) repaints the scroll bar too, whose handle then has another length. Which M first wraps
    depends on the fonts installed, so longer and longer ones are tried until one does."""
    window, _ = typing_window()
    # a narrow analysis panel, where a longer M soon wraps a line
    window.resizeDocks([window.panel_dock], [417], Qt.Orientation.Horizontal)
    QApplication.processEvents()
    derivation = window.panel.derivation
    bar = derivation.verticalScrollBar()
    assert bar.isVisible(), "the derivation is taller than its view"
    bar_paints, view_paints = _Events(QEvent.Type.Paint), _Events(QEvent.Type.Paint)
    bar.installEventFilter(bar_paints)
    derivation.viewport().installEventFilter(view_paints)

    def edits(other: str) -> list[tuple[bool, int, int]]:
        """For each of six edits back and forth: whether the height changed, the bar's and the view's paints."""
        for declaration in (other, GEMM):  # the window's first edits may still settle its sizes
            window.document.edit_declaration(0, declaration)
            QApplication.processEvents()
        seen = []
        for declaration in (other, GEMM) * 3:
            height = derivation.document().size().height()
            bar_paints.count = view_paints.count = 0
            window.document.edit_declaration(0, declaration)
            QApplication.processEvents()
            seen.append((derivation.document().size().height() != height, bar_paints.count, view_paints.count))
        return seen

    # Which edits rewrap a line depends on the fonts installed ("139 µs" → "138.9 µs" may wrap): the rule is checked
    # on every edit, and the test asks only that it saw both an edit of the same height and one of another.
    seen = []
    for other in ("K=4097", "K=4098", "N=4097"):
        seen += edits(GEMM.replace(other.split("=")[0] + "=4096", other))
        if any(not changed for changed, _, _ in seen):
            break
    for longer_m in ("40961", "4096123", "409612345", "40961234567"):
        seen += edits(GEMM.replace("M=4096", f"M={longer_m}"))
        if any(changed for changed, _, _ in seen):
            break
    assert any(not changed for changed, _, _ in seen) and any(changed for changed, _, _ in seen), seen
    for changed, bars, views in seen:
        assert views >= 1 and (bars >= 1 if changed else bars == 0), seen
    window.close()
    window.wait_for_workers()


def test_a_keystroke_builds_no_text_document_for_the_figures(qtbot, typing_window) -> None:  # type: ignore[no-untyped-def]
    """The figures and the declaration change on every keystroke; a label selectable with the mouse would rebuild
    and lay out a text document for each new text. None is made (nor destroyed) by typing, and none of the
    panel's labels is selectable until a press on it."""
    window, line = typing_window(operations=3)
    panel = window.panel
    line.setCursorPosition(len("gemm(M=4096"))
    _type(line, [Qt.Key.Key_1, Qt.Key.Key_Backspace])
    made = _Events(QEvent.Type.ChildAdded)
    documents = [document for document in panel.findChildren(QTextDocument) if document is not panel.derivation.document()]
    for document in documents:
        document.installEventFilter(made)
    for label in (panel.declaration, *panel.values.values()):
        label.installEventFilter(made)  # a selectable label's text control is its child, and its document the control's
    texts_before = [label.text() for label in panel.values.values()]
    _type(line, [Qt.Key.Key_1, Qt.Key.Key_Backspace] * 3)
    _type(line, [Qt.Key.Key_1])
    assert [label.text() for label in panel.values.values()] != texts_before
    assert made.count == 0
    assert not [document for document in panel.findChildren(QTextDocument) if document not in documents and document is not panel.derivation.document()]
    for label in (panel.declaration, *panel.values.values()):
        assert not label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse, label.objectName()
    window.close()
    window.wait_for_workers()


def _gemm_panel(qtbot):  # type: ignore[no-untyped-def]
    """A document with GEMM as its operation and its Analysis panel, 540 × 900 and shown."""
    document = Document()
    document.edit_declaration(0, GEMM)
    panel = AnalysisPanel(document)
    qtbot.addWidget(panel)
    panel.resize(540, 900)
    panel.show()
    qtbot.waitExposed(panel)
    return document, panel


def test_the_figures_are_selected_with_the_mouse_from_the_first_press(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A drag across a figure selects it (as on a label selectable from the start), a double click selects a
    word of the declaration, a right press makes the label's Copy / Select All menu available; the next new text
    of a label without focus is drawn directly again."""
    from PySide6.QtTest import QTest

    document, panel = _gemm_panel(qtbot)
    work = panel.values["work"]
    assert work.text() == "137.4 GFLOP" and not work.hasSelectedText()
    middle = work.height() // 2
    QTest.mousePress(work, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(1, middle))
    QTest.mouseMove(work, QPoint(work.width() - 1, middle))
    QTest.mouseRelease(work, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(work.width() - 1, middle))
    assert work.selectedText() == "137.4 GFLOP"

    declaration = panel.declaration
    QTest.mouseDClick(declaration, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(4, declaration.height() // 2))
    assert declaration.selectedText() == "gemm"

    bytes_label = panel.values["bytes"]
    QTest.mousePress(bytes_label, Qt.MouseButton.RightButton, Qt.KeyboardModifier.NoModifier, QPoint(4, middle))
    assert bytes_label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    QTest.mouseRelease(bytes_label, Qt.MouseButton.RightButton, Qt.KeyboardModifier.NoModifier, QPoint(4, middle))

    document.edit_declaration(0, "gemm(M=40961, N=4096, K=4096, dtype=fp16)")
    QApplication.processEvents()
    for label in (work, declaration, bytes_label):
        if not label.hasFocus():
            assert not label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse, label.objectName()
            assert not label.hasSelectedText()
    assert work.text() == "1.374 TFLOP"


def test_the_tensor_columns_fit_their_contents_measuring_only_what_changed(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The tensor table's columns (but the stretched shape column) are as wide as Qt's ResizeToContents makes them,
    after edits that change cells, the number of tensors and the text size; an edit measures only the columns whose
    cells changed (a new size: the bytes column), not every column for every changed cell."""
    from PySide6.QtWidgets import QHeaderView

    document, panel = _gemm_panel(qtbot)
    table = panel.tensors
    header = table.horizontalHeader()

    def as_resize_to_contents_makes_them() -> None:
        ours = [header.sectionSize(column) for column in range(5)]
        for column in (0, 2, 3, 4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        QApplication.processEvents()
        theirs = [header.sectionSize(column) for column in range(5)]
        for column in (0, 2, 3, 4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
        assert ours == theirs, table.item(0, 0).text()

    measured: list[int] = []
    original = table.sizeHintForColumn
    monkeypatch.setattr(table, "sizeHintForColumn", lambda column: (measured.append(column), original(column))[1])
    document.edit_declaration(0, "gemm(M=40961, N=4096, K=4096, dtype=fp16)")
    QApplication.processEvents()
    assert measured == [4]
    assert [table.item(row, 1).text() for row in range(3)] == ["40,961 × 4,096", "4,096 × 4,096", "40,961 × 4,096"]
    assert table.item(0, 4).text() == "335.6 MB" and table.item(0, 4).toolTip() == "335,552,512 B"  # 40,961 × 4,096 × 2 B
    as_resize_to_contents_makes_them()
    for declaration in (
        "attention(B=8, H=16, Sq=2048, Skv=2048, D=128, causal=false, fused=false, dtype=fp16)",
        "allreduce(n=2**27, dtype=bf16, ranks=8)",
        GEMM,
    ):
        document.edit_declaration(0, declaration)
        QApplication.processEvents()
        as_resize_to_contents_makes_them()
    font = QApplication.font()
    font.setPointSizeF(17)
    QApplication.setFont(font)
    QApplication.processEvents()
    assert table.font().pointSizeF() == 17
    as_resize_to_contents_makes_them()


def test_fitted_columns_follow_rows_removed_and_added() -> None:
    """Rows removed (the widest cell with them) or added: every fitted column is as ResizeToContents makes it."""
    from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem

    from workbench.gui.panel import FittedColumns

    table = QTableWidget(3, 2)
    fitted = FittedColumns(table, (0, 1))
    for row, text in enumerate(("a", "b", "a much longer cell")):
        table.setItem(row, 0, QTableWidgetItem(text))
    fitted.fit({0})
    wide = table.horizontalHeader().sectionSize(0)
    for rows in (2, 4, 3):
        table.setRowCount(rows)
        reference = QTableWidget(rows, 2)
        reference.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for row in range(rows):
            item = table.item(row, 0)
            reference.setItem(row, 0, QTableWidgetItem(item.text() if item is not None else ""))
        reference.horizontalHeader().resizeSections(QHeaderView.ResizeMode.ResizeToContents)
        assert table.horizontalHeader().sectionSize(0) == reference.horizontalHeader().sectionSize(0), rows
    assert table.horizontalHeader().sectionSize(0) < wide


def test_in_presentation_typing_leaves_the_panel_its_width(qtbot, typing_window, long_pause) -> None:  # type: ignore[no-untyped-def]
    """At presentation size the details sit under their figures and the panel fits its dock (beside them, three
    columns were wider than the dock, and the details were seen only by scrolling sideways). Typing, digits on
    and off M (137,438,953,472 ↔ 1,374,389,534,720 FLOP, and on to 137,442,031,570,944 typing M=4096123), neither
    resizes the panel (which lays all of it out and repaints it) nor moves its rows: the labels a keystroke
    rewraps keep the tallest height they have had, until a change that is not a keystroke."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QLabel

    from workbench.gui.panel import FIGURE_TITLES

    window, line = typing_window()
    window.available_screen = lambda: QRect(0, 0, 1600, 1000)
    window.set_presentation(True)
    qtbot.wait(50)
    panel = window.panel
    assert panel.details_stacked
    names = [label for label in panel.findChildren(QLabel) if label.text() in FIGURE_TITLES.values()]
    line.setFocus()
    line.setCursorPosition(len("gemm(M=4096"))
    _type(line, [Qt.Key.Key_1, Qt.Key.Key_Backspace])
    assert panel.width() <= panel.parentWidget().width(), "the panel fits its dock in presentation"
    for key, value in panel.values.items():
        detail = panel.details[key]
        assert detail.y() >= value.y() + value.height() - 1 and detail.x() < value.x(), (key, "under its figure")
    resizes = _Events(QEvent.Type.Resize)
    panel.installEventFilter(resizes)
    moves = _Events(QEvent.Type.Move)
    for label in [*names, *panel.values.values(), *panel.details.values(), panel.limiter]:
        label.installEventFilter(moves)
    widths = set()
    tops = []  # where the last figure's row is after each keystroke
    alternating = [Qt.Key.Key_1, Qt.Key.Key_Backspace] * 3
    up_and_back = [Qt.Key.Key_1, Qt.Key.Key_2, Qt.Key.Key_3] + [Qt.Key.Key_Backspace] * 3
    for index, key in enumerate(alternating + up_and_back):
        _type(line, [key])
        assert panel.width() == max(panel.minimumSizeHint().width(), panel.parentWidget().width())
        for name in names:
            assert name.width() >= name.sizeHint().width(), (name.text(), name.width(), name.sizeHint().width())
        widths.add(panel.width())
        tops.append(panel.values["bound"].y())
        if index == len(alternating) - 1:  # the same two texts again and again: nothing moves at all
            assert resizes.count == 0 and moves.count == 0, (resizes.count, moves.count)
    # Longer texts (M=4096123) may make a label taller, and the rows under it move down: never back up while typing.
    assert len(widths) == 1, widths
    assert tops == sorted(tops), tops
    window.set_presentation(False)
    qtbot.wait(50)
    assert not panel.details_stacked
    for key, value in panel.values.items():
        assert panel.details[key].x() > value.x() + value.width() - 1, (key, "beside its figure again")
    window.close()
    window.wait_for_workers()


def test_a_label_a_keystroke_rewraps_keeps_its_height_while_the_declaration_is_typed(qtbot, typing_window, long_pause) -> None:  # type: ignore[no-untyped-def]
    """The title wraps onto two lines for "GEMM 40961×4096×4096 fp16" at presentation size and fits on one for
    "GEMM 4096³ fp16": typed back to the short name it stays two lines tall, pauses in the typing included, and
    takes one line again at the next change that is not a keystroke (an undo, another operation)."""
    from PySide6.QtCore import QRect

    window, line = typing_window()
    window.available_screen = lambda: QRect(0, 0, 1600, 1000)
    window.set_presentation(True)
    qtbot.wait(50)
    panel = window.panel
    title = panel.title
    one_line = title.height()
    line.setFocus()
    line.setCursorPosition(len("gemm(M=4096"))
    _type(line, [Qt.Key.Key_1])
    assert title.text() == "GEMM 40961×4096×4096 fp16"
    two_lines = title.height()
    assert two_lines > one_line, "the long name wraps at presentation size"
    _type(line, [Qt.Key.Key_Backspace, Qt.Key.Key_1, Qt.Key.Key_Backspace])
    assert title.text() == "GEMM 4096³ fp16" and title.height() == two_lines and panel.heights_held
    panel.catch_up_derivation()  # the typing pauses: the rows stay where they are
    QApplication.processEvents()
    assert panel.heights_held and title.height() == two_lines
    _type(line, [Qt.Key.Key_1])
    assert title.height() == two_lines
    window.document.undo_stack.undo()  # not a keystroke (back to 4096): the labels take their own heights at once
    QApplication.processEvents()
    assert not panel.heights_held and title.height() == one_line
    line.setCursorPosition(len("gemm(M=4096"))  # (the undo put the whole line back)
    _type(line, [Qt.Key.Key_1])
    assert title.height() == two_lines and panel.heights_held
    window.document.select(0)  # (already selected: no change, nothing let go)
    assert panel.heights_held
    window.set_presentation(False)
    window.close()
    window.wait_for_workers()
