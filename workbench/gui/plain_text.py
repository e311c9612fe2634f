"""Text from outside the program is shown as text, never as markup: the one place every view goes through.

Qt decides by itself whether a label's, a message box's or a tooltip's text is HTML (Qt.mightBeRichText looks
for a tag on its first line), and rich text loads the images it names: a session titled
`<img src='/dev/zero'>` made the window read /dev/zero until memory ran out. Session files, profiles, traces,
device files and the command line are a stranger's text (titles, names, declarations, descriptions, notes,
kernel names, run conditions, device names, citations), so a view puts them on screen with:

- `plain(label)`: a QLabel or QMessageBox whose text is shown as written, whatever it holds;
- `tooltip(text)`: a tooltip that shows `text` as written (escaped and wrapped where Qt would take it for HTML);
- `html_text(text)`: `text` escaped for HTML the window builds itself (pyqtgraph's legend rows, plot titles
  and axis labels are HTML; so are the rich-text panels);
- `NoResourceDocument`: a document for rendered Markdown or built HTML that loads no resource at all (no
  file, no network), whose images show as their alt text.

Item views (lists, tables, combo boxes), buttons, tabs, menus, the status bar, line edits and window titles
draw their text as plain text already; their tooltips still go through `tooltip`.
"""

from __future__ import annotations

import html
from typing import Any, TypeVar

from PySide6.QtCore import QUrl, Qt
from PySide6.QtGui import Qt as GuiQt  # QtGui's Qt carries mightBeRichText
from PySide6.QtGui import QImage, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QLabel, QMessageBox

Shown = TypeVar("Shown", QLabel, QMessageBox)


def plain(widget: Shown, text: str | None = None) -> Shown:
    """`widget` shows its text as written from now on (and shows `text`, when given)."""
    widget.setTextFormat(Qt.TextFormat.PlainText)
    if text is not None:
        widget.setText(text)
    return widget


def html_text(text: str) -> str:
    """`text` escaped for HTML: each character shown as written, newlines as line breaks."""
    return html.escape(text).replace("\n", "<br>")


def tooltip(text: str) -> str:
    """A tooltip that shows `text` as written. Qt shows a tooltip as HTML when Qt.mightBeRichText says so: such a
    text is escaped and wrapped in a paragraph that keeps its lines and spaces as plain text would; any other is
    given as it is (Qt shows it as plain text)."""
    if not GuiQt.mightBeRichText(text):
        return text
    return f"<p style='white-space:pre'>{html.escape(text)}</p>"


class NoResourceDocument(QTextDocument):
    """A text document that loads nothing: no image, style sheet or link target from a file or the network.

    An image in the text (Markdown `![alt](/dev/zero)`, `<img>` in built HTML) is shown as its alt text. The
    notes panel renders a session's Markdown through it; Qt's own document would read any local path an image
    names. Qt lays images out while it imports Markdown, before they can be replaced, and where a document gives
    no image for a name Qt reads the name as a file itself (QImage::load): so every image this document is asked
    for is one blank pixel, never nothing."""

    BLANK = QImage(1, 1, QImage.Format.Format_ARGB32)
    BLANK.fill(0)

    def loadResource(self, kind: int, name: QUrl | str) -> Any:  # noqa: N802 (Qt's name)
        return self.BLANK if int(kind) == QTextDocument.ResourceType.ImageResource.value else None

    # setMarkdown and setHtml are not virtual in Qt: call them on the document (a QTextEdit's own setHtml does
    # not come here), so that images are replaced; loadResource is virtual and holds either way.
    def setMarkdown(self, markdown: str, features: Any = None) -> None:  # noqa: N802 (Qt's name)
        if features is None:
            super().setMarkdown(markdown)
        else:
            super().setMarkdown(markdown, features)
        self.images_as_alt_text()

    def setHtml(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setHtml(text)
        self.images_as_alt_text()

    def images_as_alt_text(self) -> None:
        """Each image in the document replaced by its alt text (or nothing where it has none)."""
        images = []
        block = self.begin()
        while block.isValid():
            iterator = block.begin()
            while not iterator.atEnd():
                fragment = iterator.fragment()
                if fragment.isValid() and fragment.charFormat().isImageFormat():
                    images.append((fragment.position(), fragment.length(), fragment.charFormat()))
                iterator += 1
            block = block.next()
        for position, length, fmt in reversed(images):  # from the end: earlier positions stay where they are
            alt = fmt.property(QTextFormat.Property.ImageAltText)
            cursor = QTextCursor(self)
            cursor.setPosition(position)
            cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
            text_format = fmt.toCharFormat()
            text_format.setObjectType(0)  # text, not an image object
            text_format.clearProperty(QTextFormat.Property.ImageName)
            cursor.insertText(alt if isinstance(alt, str) else "", text_format)
