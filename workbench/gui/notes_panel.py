"""The notes panel: the session's description and the selected operation's notes, Markdown rendered and editable.

Each part shows its Markdown rendered; a click on a checklist box ticks it (an
undo step of its own) and "Edit" switches to the source text, whose typing
is undoable too. The text lives in the session (description, notes), so it is
saved, autosaved and printed in reports like everything else; boxes are found
and ticked in the text by `workbench.documents.notes`.

The Markdown is a stranger's text: it is rendered without raw HTML, through a
document that loads nothing (an image shows as its alt text), with `*` inside
a word kept as written (`2**27`, `workbench.documents.notes.for_rendering`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, Qt, Signal
from PySide6.QtGui import QFont, QMouseEvent, QShowEvent, QTextBlockFormat, QTextDocument
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QStackedWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.gui.document import Document
from workbench.gui.lazy_view import RefreshWhenShown
from workbench.gui.plain_text import NoResourceDocument, html_text, plain, tooltip
from workbench.gui.undo_keys import use_document_undo
from workbench.documents.notes import checklist, for_rendering, progress

_MARKERS = (QTextBlockFormat.MarkerType.Unchecked, QTextBlockFormat.MarkerType.Checked)
# GitHub's Markdown (lists, boxes, tables, emphasis) without raw HTML: `<img src=…>` in a note is text
MARKDOWN = QTextDocument.MarkdownFeature.MarkdownDialectGitHub | QTextDocument.MarkdownFeature.MarkdownNoHTML


class MarkdownNote(QWidget):
    """One Markdown text: rendered with boxes to tick, or its source to edit."""

    edited = Signal(str)  # the source text after a keystroke
    box_toggled = Signal(int, bool)  # box index (in text order), ticked

    def __init__(self, title: str, empty_text: str, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.title = plain(QLabel(title))  # the session's title, the operation's name
        self.title.setObjectName(f"{name}Title")
        self.title.setStyleSheet("font-weight: 600;")
        self.title.setWordWrap(True)
        self.progress = plain(QLabel())
        self.progress.setObjectName(f"{name}Progress")
        self.progress.setStyleSheet("color: #555;")
        self.edit_button = QToolButton()
        self.edit_button.setObjectName(f"{name}Edit")
        self.edit_button.setText("Edit")
        self.edit_button.setCheckable(True)
        self.edit_button.setToolTip("Edit the Markdown source; - [ ] at the start of a line makes a box to tick")
        self.edit_button.toggled.connect(self._show_mode)
        self.rendered = QTextBrowser()
        self.rendered.setObjectName(f"{name}Rendered")
        self.rendered.setOpenLinks(False)
        self.rendered.setDocument(NoResourceDocument(self.rendered))
        self.rendered.setToolTip("Click a box to tick it; Edit to change the text")
        self.rendered.viewport().installEventFilter(self)
        self.source = QPlainTextEdit()
        self.source.setObjectName(f"{name}Source")
        self.source.setPlaceholderText(empty_text)
        self.source.textChanged.connect(self._typed)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.rendered)
        self.stack.addWidget(self.source)
        self.empty_text = empty_text
        self._text = ""
        self._setting = False
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.progress)
        top.addWidget(self.edit_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)

    @property
    def editing(self) -> bool:
        return self.edit_button.isChecked()

    def show_text(self, text: str) -> None:
        """Show this text (after an edit, an undo, another operation); the source keeps its cursor when it can."""
        self._text = text
        if self.source.toPlainText() != text:
            self._setting = True
            cursor = self.source.textCursor().position()
            self.source.setPlainText(text)
            moved = self.source.textCursor()
            moved.setPosition(min(cursor, len(text)))
            self.source.setTextCursor(moved)
            self._setting = False
        done, total = progress(text)
        self.progress.setText(f"{done} of {total} ticked" if total else "")
        if (text, self.empty_text) != self._rendered_for:  # an edit elsewhere re-shows the same notes: nothing to render
            self._render()

    _rendered_for: tuple[str, str] | None = None  # the text (and empty-state text) the rendered view shows

    def _render(self) -> None:
        self._rendered_for = (self._text, self.empty_text)
        if not self._text.strip():
            self.rendered.setHtml(f"<p style='color:#777'>{html_text(self.empty_text)}</p>")
            return
        self.rendered.document().setMarkdown(for_rendering(self._text), MARKDOWN)

    def rendered_boxes(self) -> list[tuple[int, bool]]:
        """(block number, ticked) of each box as rendered, in order."""
        found = []
        block = self.rendered.document().begin()
        while block.isValid():
            marker = block.blockFormat().marker()
            if marker in _MARKERS:
                found.append((block.blockNumber(), marker == QTextBlockFormat.MarkerType.Checked))
            block = block.next()
        return found

    def box_at(self, position: QPointF) -> int | None:
        """The index of the box whose marker is at this point of the rendered view's viewport, or None."""
        offset = QPointF(self.rendered.horizontalScrollBar().value(), self.rendered.verticalScrollBar().value())
        block = self.rendered.document().documentLayout().blockWithMarkerAt(position + offset)
        if not block.isValid():
            return None
        for index, (number, _) in enumerate(self.rendered_boxes()):
            if number == block.blockNumber():
                return index if index < len(checklist(self._text)) else None
        return None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if (
            watched is self.rendered.viewport()
            and event.type() == QEvent.Type.MouseButtonPress
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
        ):
            index = self.box_at(event.position())
            if index is not None:
                self.toggle(index)
                return True
        return super().eventFilter(watched, event)

    def toggle(self, index: int) -> None:
        """Tick box `index` if it is clear, clear it if ticked."""
        items = checklist(self._text)
        if 0 <= index < len(items):
            self.box_toggled.emit(index, not items[index].checked)

    def _typed(self) -> None:
        if not self._setting:
            self.edited.emit(self.source.toPlainText())

    def _show_mode(self, editing: bool) -> None:
        self.stack.setCurrentWidget(self.source if editing else self.rendered)
        if editing:
            self.source.setFocus()

    def set_base_font(self, font: QFont) -> None:
        for widget in (self.rendered, self.source, self.title, self.progress, self.edit_button):
            widget.setFont(font)
        self._render()


class NotesPanel(RefreshWhenShown, QWidget):
    """The session's description above the selected operation's notes.

    Behind another dock's tab (where Qt keeps it visible, but covered) it waits: its title follows the
    operation's name, which changes with every keystroke in the declaration, and each new title laid the
    covered panel out again. Its tab chosen (the dock's visibilityChanged), it shows everything anew."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.description = MarkdownNote(
            "Session", "No description. Edit to say what this session is for.", "sessionDescription"
        )
        self.notes = MarkdownNote(
            "Notes", "No notes for this operation. Edit to write some; - [ ] starts a box to tick.", "operationNotes"
        )
        self.description.edited.connect(lambda text: document.set_notes(-1, text))
        self.description.box_toggled.connect(lambda box, checked: document.set_checked(-1, box, checked))
        self.notes.edited.connect(self._notes_edited)
        self.notes.box_toggled.connect(self._box_toggled)
        for note in (self.description, self.notes):
            use_document_undo(note.source, document.undo_stack)
        # The title follows the operation's name, which changes with every keystroke in the declaration: its
        # longest word ("40961×4096×4096") must not set the panel's least width (the dock would be laid out on
        # every keystroke, even behind the Analysis tab). A word longer than the panel is cut; the tooltip has it.
        self.notes.title.setMinimumWidth(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.description, 1)
        layout.addWidget(self.notes, 3)
        document.notes_changed.connect(self._notes_changed)
        document.session_replaced.connect(self.mark_dirty)
        document.selection_changed.connect(self.mark_dirty)
        document.operations_changed.connect(self.mark_dirty)
        self.refresh()

    def refresh(self, *_: object) -> None:
        self._dirty = False
        session = self.document.session
        self.description.title.setText(session.title or "Session")
        self.description.show_text(session.description)
        entry = self.document.current_entry
        self.notes.setEnabled(entry is not None)
        title = f"Notes — {entry.name}" if entry is not None else "Notes (no operation selected)"
        if self.notes.title.text() != title:
            self.notes.title.setText(title)
            self.notes.title.setToolTip(tooltip(title))
        self.notes.show_text(entry.notes if entry is not None else "")

    def _refresh_if_due(self) -> None:
        if self._dirty and self.isVisible() and not self.visibleRegion().isEmpty():
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        dock = self.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        if dock is not None and dock is not self._dock:  # its tab chosen: uncovered
            self._dock = dock
            dock.visibilityChanged.connect(lambda shown: shown and self._refresh_if_due())

    _dock: QDockWidget | None = None

    def _notes_changed(self, index: int) -> None:
        if self._dirty:  # hidden and behind: shown, it shows everything anew
            self._refresh_if_due()
            return
        if index < 0:
            self.description.show_text(self.document.session.description)
        elif index == self.document.current:
            entry = self.document.current_entry
            self.notes.show_text(entry.notes if entry is not None else "")

    def _notes_edited(self, text: str) -> None:
        if self.document.current >= 0:
            self.document.set_notes(self.document.current, text)

    def _box_toggled(self, box: int, checked: bool) -> None:
        if self.document.current >= 0:
            self.document.set_checked(self.document.current, box, checked)

    def set_base_font(self, font: QFont) -> None:
        self.description.set_base_font(font)
        self.notes.set_base_font(font)
