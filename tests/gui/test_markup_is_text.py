"""Issue 33: text from a session file is shown as text, never as markup, wherever the window shows it.

A session whose every text field holds markup naming its field (`<u>¤title¤</u>`, tests/markup_sessions.py) is
opened; every page is built and every operation and run chosen; then every text on screen is read as Qt shows
it: a label or a tooltip that Qt takes for rich text is shown as its HTML renders, a document as its plain
text, an item's display text as written. Each field's markup must be seen whole, tags and all; markup whose tags
are gone was rendered, and `&lt;` on screen was escaped for a reader that does not unescape.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QUrl
from PySide6.QtGui import QImage, Qt, QTextDocument  # QtGui's Qt has mightBeRichText
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QGraphicsTextItem,
    QGraphicsView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTabWidget,
    QTextEdit,
    QWidget,
)

from markup_sessions import FIELDS, SHOWN, dev_zero, marker, write_markup_session
from workbench.model.devices.nvml import NO_DRIVER, Detection
from workbench.documents.examples import load_example
from workbench.documents.session import save

MARKED = re.compile(r"(.{0,3})¤([^¤\n]{1,40})¤(.{0,4})", re.S)  # a field's marker, with what is shown around it


def no_driver() -> Detection:
    return Detection(NO_DRIVER, "no NVIDIA driver found (NVML Shared Library Not Found)")


def open_window(qtbot, path: Path | None = None):  # type: ignore[no-untyped-def]
    from workbench.gui.app import build_window

    win = build_window(str(path) if path else None, detect=no_driver)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.document.detection is not None, timeout=10000)
    win.wait_for_workers()
    return win


def as_rich_text_shows(text: str) -> str:
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def shown_as_tooltip(text: str) -> str:
    """What QToolTip shows of a tooltip: Qt takes it for rich text when Qt.mightBeRichText says so."""
    return as_rich_text_shows(text) if Qt.mightBeRichText(text) else text


def shown_by_label(label: QLabel) -> str:
    text = label.text()
    fmt = label.textFormat()
    if fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText and Qt.mightBeRichText(text)):
        return as_rich_text_shows(text)
    if fmt == Qt.TextFormat.MarkdownText:
        document = QTextDocument()
        document.setMarkdown(text)
        return document.toPlainText()
    return text


def columns(model: QAbstractItemModel) -> int:
    try:
        return model.columnCount(QModelIndex())
    except TypeError:  # a list model's columnCount is private: one column
        return 1


def model_texts(model: QAbstractItemModel, where: str) -> Iterator[tuple[str, str]]:
    def walk(parent: QModelIndex) -> Iterator[tuple[str, str]]:
        for row in range(model.rowCount(parent)):
            for column in range(max(columns(model), 1)):
                index = model.index(row, column, parent)
                display = model.data(index, Qt.ItemDataRole.DisplayRole)
                if isinstance(display, str):
                    yield f"{where} item {row},{column}", display  # item views draw their text as plain text
                tip = model.data(index, Qt.ItemDataRole.ToolTipRole)
                if isinstance(tip, str):
                    yield f"{where} item {row},{column} tooltip", shown_as_tooltip(tip)

    yield from walk(QModelIndex())
    for orientation in (Qt.Orientation.Horizontal, Qt.Orientation.Vertical):
        count = columns(model) if orientation == Qt.Orientation.Horizontal else model.rowCount(QModelIndex())
        for section in range(min(count, 200)):
            tip = model.headerData(section, orientation, Qt.ItemDataRole.ToolTipRole)
            if isinstance(tip, str):
                yield f"{where} header {section} tooltip", shown_as_tooltip(tip)


def shown_widgets() -> list[QWidget]:
    """Every widget on screen: each visible window (the main window, a dialog, a menu) and all inside it. Windows
    earlier tests closed are left out; they show nothing."""
    shown: list[QWidget] = []
    for window in QApplication.topLevelWidgets():
        if window.isVisible():
            shown += [window, *window.findChildren(QWidget)]
    return shown


def shown_texts() -> Iterator[tuple[str, str]]:
    """(where, text as shown) for every text of every widget on screen, and of its plots' items."""
    for widget in shown_widgets():
        where = f"{type(widget).__name__} {widget.objectName()!r}"
        if widget.isWindow():
            yield f"{where} window title", widget.windowTitle()
        if widget.toolTip():
            yield f"{where} tooltip", shown_as_tooltip(widget.toolTip())
        if isinstance(widget, QLabel):
            yield where, shown_by_label(widget)
        elif isinstance(widget, (QAbstractButton, QLineEdit)):
            yield where, widget.text()
        elif isinstance(widget, (QTextEdit, QPlainTextEdit)):
            yield where, widget.document().toPlainText()
        if isinstance(widget, QComboBox):
            yield from model_texts(widget.model(), where)
        if isinstance(widget, QTabWidget):
            for tab in range(widget.count()):
                yield f"{where} tab {tab}", widget.tabText(tab)
                yield f"{where} tab {tab} tooltip", shown_as_tooltip(widget.tabToolTip(tab))
        if isinstance(widget, QAbstractItemView) and widget.model() is not None:
            yield from model_texts(widget.model(), where)
        for action in QWidget.actions(widget):  # (the main window names a dict of its own `actions`)
            yield f"{where} action", action.text()
            yield f"{where} action tooltip", shown_as_tooltip(action.toolTip())
        if isinstance(widget, QGraphicsView) and widget.scene() is not None:
            for item in widget.scene().items():
                if isinstance(item, QGraphicsTextItem):
                    yield f"{where} {type(item).__name__}", item.toPlainText()
                if item.toolTip():
                    yield f"{where} {type(item).__name__} tooltip", shown_as_tooltip(item.toolTip())


def markup_faults(seen: set[str] | None = None) -> list[str]:
    """Each place where a field's markup is not seen whole on screen; the fields seen whole are added to `seen`."""
    faults = []
    for where, text in shown_texts():
        if "&lt;u&gt;" in text or "&amp;" in text:
            faults.append(f"{where}: shows escaped markup: {text[:160]!r}")
        for found in MARKED.finditer(text):
            before, field, _ = found.groups()
            if field not in FIELDS:
                continue
            if before != "<u>":  # the opening tag gone: rendered (the end may be cut: a kernel's template arguments)
                faults.append(f"{where}: {field!r} rendered as markup: {text[:160]!r}")
            elif seen is not None:
                seen.add(field)
    return faults


def every_state(win) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """Each operation chosen in turn, with its notes shown, then every page (each is built when first shown)."""
    for operation in range(len(win.document.session.operations)):
        win.document.select(operation)
        win.notes_dock.raise_()
        QApplication.processEvents()
        yield f"operation {operation}, notes"
        win.panel_dock.raise_()
        for index in range(win.tabs.count()):
            win.tabs.setCurrentIndex(index)
            QApplication.processEvents()
            win.wait_for_workers()
            QApplication.processEvents()
            yield f"operation {operation}, tab {win.tabs.tabText(index)!r}"


def faults_in_every_state(win, seen: set[str]) -> list[str]:  # type: ignore[no-untyped-def]
    faults: list[str] = []
    for state in every_state(win):
        faults += [f"{state}: {fault}" for fault in markup_faults(seen)]
    return list(dict.fromkeys(faults))


def test_every_text_from_the_session_is_shown_as_text_in_every_widget(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win = open_window(qtbot, write_markup_session(tmp_path / "marked.json", marker))
    seen: set[str] = set()
    faults = faults_in_every_state(win, seen)
    assert not faults, "\n".join(faults)
    assert set(SHOWN) <= seen, f"the walk never saw {sorted(set(SHOWN) - seen)}"  # a walk that sees nothing cannot fail


def test_the_unsaved_changes_question_names_the_session_as_text(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A session never saved is named by its title in the Save / Discard / Cancel question."""
    win = open_window(qtbot, write_markup_session(tmp_path / "marked.json", marker))
    win.document.path = None
    box = win.session_io.unsaved_changes_box("closing")
    seen: set[str] = set()
    faults = markup_faults(seen)
    assert box.text() == f"“{marker('title')}” has unsaved changes."
    assert not faults, "\n".join(faults)
    assert "title" in seen
    box.deleteLater()


def test_kernel_names_of_an_imported_profile_are_shown_as_text(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Nsight Compute's kernel names are outside text too, in the match dialog and after."""
    data = Path(__file__).parent.parent / "data"
    kernel = "cupy_add__float32_float32_float32"
    profile = tmp_path / "<img src=x>.csv"
    profile.write_text((data / "ncu_raw.csv").read_text(encoding="utf-8").replace(kernel, marker("kernel")), encoding="utf-8")
    win = open_window(qtbot)
    win.import_profile(str(profile))
    qtbot.waitUntil(lambda: win.profile_importer.dialog is not None, timeout=10000)
    seen: set[str] = set()
    faults = markup_faults(seen)
    win.profile_importer.dialog.accept()
    qtbot.waitUntil(lambda: not win.profile_importer.busy, timeout=10000)
    faults += faults_in_every_state(win, seen)
    assert not faults, "\n".join(faults)
    assert "kernel" in seen, seen


def test_the_walk_finds_markup_rendered_as_rich_text(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The walk itself: a label that renders a name as rich text is found, and a plain one is not."""
    win = open_window(qtbot)
    label = QLabel(marker("name"), win)
    label.setObjectName("renderingLabel")
    assert any("renderingLabel" in fault for fault in markup_faults())
    label.setTextFormat(Qt.TextFormat.PlainText)
    assert not any("renderingLabel" in fault for fault in markup_faults())
    label.setTextFormat(Qt.TextFormat.AutoText)
    label.setText("&lt;u&gt;¤name¤&lt;/u&gt; shown escaped")
    label.setTextFormat(Qt.TextFormat.PlainText)
    assert any("renderingLabel" in fault for fault in markup_faults())


def shown_notes(win, operation: int | None = None) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The session's description and the operation's notes as the notes panel renders them."""
    if operation is not None:
        win.document.select(operation)
    win.notes_dock.raise_()
    QApplication.processEvents()
    panel = win.notes_panel
    return panel.description.rendered.toPlainText(), panel.notes.rendered.toPlainText()


def test_the_data_parallel_example_s_notes_show_2_27_and_2_28_as_written(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The reproduction: "2**27 BF16 … 2**28 FP32" rendered bold with the exponents gone."""
    win = open_window(qtbot)
    win.open_example("data-parallel-step")
    description, _ = shown_notes(win)
    assert "(2**27 BF16 elements, 256 MiB)" in description
    assert "(axpy over 2**28 FP32 weights)" in description
    optimizer = next(i for i, entry in enumerate(win.document.session.operations) if entry.name.startswith("Optimizer"))
    _, notes = shown_notes(win, optimizer)
    assert notes.startswith("3 × 2**28 × 4 B = 3.2 GB")


def test_notes_keep_their_markdown(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Emphasis, lists, boxes and code still render; `*` inside a word and in code is written as it is."""
    session = load_example("vector-add")
    session.operations[0].notes = (
        "**bold** and *slanted*, n=2**24 and `2**24`\n\n- [ ] a box\n- [x] ticked\n- item\n\n```\nM**2\n```"
    )
    path = tmp_path / "notes.json"
    save(session, path)
    win = open_window(qtbot, path)
    _, notes = shown_notes(win, 0)
    assert notes.splitlines()[0] == "bold and slanted, n=2**24 and 2**24"
    assert "M**2" in notes
    document = win.notes_panel.notes.rendered.document()
    bold = document.find("bold")
    assert bold.charFormat().fontWeight() > 500  # still bold
    assert [ticked for _, ticked in win.notes_panel.notes.rendered_boxes()] == [False, True]


def test_an_image_in_a_note_loads_nothing_and_shows_its_alt_text(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A real image file named by a note (Markdown and raw HTML) is never read: the alt text is shown instead."""
    image = QImage(3, 2, QImage.Format.Format_RGB32)
    image.fill(0xFF0000)
    png = tmp_path / "seen.png"
    assert image.save(str(png))
    session = load_example("vector-add")
    session.description = f"before ![the alt text]({png}) after ![]({png.as_uri()}) <img src='{png}'>"
    path = tmp_path / "image.json"
    save(session, path)
    win = open_window(qtbot, path)
    description, _ = shown_notes(win)
    assert description == f"before the alt text after  <img src='{png}'>"
    document = win.notes_panel.description.rendered.document()
    fragments = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragments.append(iterator.fragment().charFormat())
            iterator += 1
        block = block.next()
    assert not any(fmt.isImageFormat() for fmt in fragments)
    loaded = document.resource(QTextDocument.ResourceType.ImageResource.value, QUrl.fromLocalFile(str(png)))
    assert not isinstance(loaded, QImage) or loaded.size() != image.size()  # the blank pixel, not the file


def test_a_window_of_dev_zero_images_opens(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """In this process (the memory-capped runs are tests/test_window_fuzz.py): every field `<img src='/dev/zero'>`,
    the notes `![z](/dev/zero)`, every page and operation shown."""
    win = open_window(qtbot, write_markup_session(tmp_path / "zero.json", dev_zero))
    for _ in every_state(win):
        pass
    assert win.windowTitle().startswith("zero.json")
    assert win.notes_panel.description.title.text() == "<img src='/dev/zero'>"
