"""The derivation as the panel shows it: HTML built from the analysis's steps, shown and retexted in place.

`derivation_rich_text` turns an Analysis's steps and notes into a RichText (markup and the texts between);
DerivationView shows one, replacing only the changed texts while a keystroke keeps the derivation's shape.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

from workbench.model.analysis import Analysis
from workbench.gui.cached_frames import cached_frame_style

class DerivationView(QTextBrowser):
    """The derivation, read-only, shown from a RichText.

    A keystroke in the declaration changes figures in most steps of the derivation but not its shape (its steps,
    tables and notes). A new text of the shape shown replaces the changed paragraphs' text in place: no parse of
    the HTML, no layout of the unchanged paragraphs, no clearing of the view (its scroll bar would hide and show
    again and the whole view repaint). Another shape is set afresh with setHtml. Either way the document is the one
    setHtml would make of the new HTML: a paragraph is retexted only where setHtml was seen to show each text of
    the shape as the one run of its own paragraph, and where it would show the new text as it is (but for the
    no-break spaces of a cell that does not wrap, which setHtml was seen to make of that paragraph's spaces)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        # A figure that wraps onto another line (or back) changes the derivation's height and repaints its scroll
        # bar, whose gradients Fusion draws pixel by pixel: drawn once per look, blitted after.
        bar = self.verticalScrollBar()
        bar.setStyle(cached_frame_style())
        # The style draws the bar over the window colour; filled with that colour first (as behind it), the bar is
        # opaque, and its repaint is the bar alone, not also the panel behind it.
        bar.setAutoFillBackground(True)
        self._shown: RichText | None = None
        # Where setHtml put each text shown (None for an empty text); None as a whole where it did not show the
        # texts one paragraph each: the shape is then set afresh until a render shows them so.
        self._places: tuple[_Place | None, ...] | None = None

    def show_rich_text(self, text: RichText) -> None:
        """Show `text`: in place where it has the shape shown, else afresh."""
        shown = self._shown
        if text == shown:  # most keystrokes elsewhere leave it as it was
            return
        edits = self._edits(shown, text) if shown is not None else None
        if edits is not None:
            self._retext(edits)
        else:
            self.setHtml(text.html)
            _keep_shaped_text(self.document())
            self._places = _text_places(self.document(), text.texts)
        self._shown = text

    def _edits(self, shown: RichText, text: RichText) -> list[tuple[_Place, str]] | None:
        """The paragraphs to retext and their new texts as setHtml would show them; None if it cannot be in place."""
        if self._places is None or text.shape != shown.shape:
            return None
        edits = []
        for old, new, place in zip(shown.texts, text.texts, self._places):
            if new != old:
                shown_as = place.shows(new) if place is not None else None
                if shown_as is None:
                    return None
                edits.append((place, shown_as))
        return edits

    def _retext(self, edits: list[tuple[_Place, str]]) -> None:
        document = self.document()
        cursor = QTextCursor(document)
        cursor.beginEditBlock()  # one layout of the changed paragraphs when it ends, not one for each
        for place, text in edits:
            block = document.findBlockByNumber(place.block)
            cursor.setPosition(block.position())
            cursor.setPosition(block.position() + block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(text, place.char_format)
        cursor.endEditBlock()


@dataclass(frozen=True)
class _Place:
    """The paragraph where setHtml put one text of a RichText: its number, the format of its one run, and what it
    made of the text's spaces (a cell that does not wrap has no-break spaces; None: the text had none to see)."""

    block: int
    char_format: QTextCharFormat
    space: str | None

    def shows(self, text: str) -> str | None:
        """What setHtml would show of `text` in this paragraph, or None where that is not known."""
        if not _verbatim(text):
            return None
        if " " not in text:
            return text
        return text.replace(" ", self.space) if self.space is not None else None


def _text_places(document: QTextDocument, texts: tuple[str, ...]) -> tuple[_Place | None, ...] | None:
    """Where setHtml put each text (None for an empty text): the paragraph that shows it alone, in one run, as it
    is or with no-break spaces for its spaces; None if the document's non-empty paragraphs are not the texts, one
    each, in order."""
    places: list[_Place | None] = []
    block = document.begin()
    for text in texts:
        if not text:
            places.append(None)
            continue
        while block.isValid() and not block.text():
            block = block.next()
        if not block.isValid():
            return None
        shown = block.text()
        if " " not in text:
            space = None
        elif shown == text:
            space = " "
        elif shown == text.replace(" ", NO_BREAK_SPACE):
            space = NO_BREAK_SPACE
        else:
            return None
        if space is None and shown != text:
            return None
        runs = block.begin()
        fragment = runs.fragment()
        runs += 1
        if not runs.atEnd():  # more than one run of text in the paragraph
            return None
        places.append(_Place(block.blockNumber(), fragment.charFormat(), space))
        block = block.next()
    while block.isValid():
        if block.text():
            return None
        block = block.next()
    return tuple(places)


NO_BREAK_SPACE = "\u00a0"


def _keep_shaped_text(document: QTextDocument) -> None:
    """Have each paragraph keep its text shaped (its glyphs) from one layout to the next paint.

    A QTextDocument's paragraphs drop their glyphs once laid out, and shape their text again each time they are
    painted: a keystroke lays out the derivation's changed paragraphs and then repaints the view, so every
    paragraph shown was shaped twice, or once only to be painted (≈ 1 M instructions a keystroke). A paragraph
    keeps the setting while its text is replaced in place; setHtml makes new paragraphs."""
    block = document.begin()
    while block.isValid():
        block.layout().setCacheEnabled(True)
        block = block.next()


def _verbatim(text: str) -> bool:
    """Whether HTML shows `text` as it is (but for no-break spaces where it does not wrap): no white space but
    single spaces between words (HTML collapses white space and drops it at the ends), no control, format or
    separator characters; not empty."""
    return bool(text) and text.isprintable() and text.strip(" ") == text and "  " not in text


SIDE_BY_SIDE = ": logical | physical"  # a step whose expression reads "logical | physical" (an implementation model)
_MONO = "font-family:\"DejaVu Sans Mono\",monospace"


@dataclass(frozen=True)
class RichText:
    """HTML kept as its markup and the texts between: `markup[i]` comes before `texts[i]`, `markup[-1]` last.

    Two rich texts of one `shape` (the same markup, the same texts empty) make documents of the same blocks and
    formats that differ only in the texts; DerivationView replaces those in place."""

    markup: tuple[str, ...]
    texts: tuple[str, ...]

    @property
    def html(self) -> str:
        escaped = (html.escape(text) for text in self.texts)
        return "".join(part for pair in zip(self.markup, escaped) for part in pair) + self.markup[-1]

    @property
    def shape(self) -> tuple[tuple[str, ...], tuple[bool, ...]]:
        return self.markup, tuple(bool(text) for text in self.texts)


class _RichTextBuilder:
    """Markup and texts appended in document order (texts escaped only when the HTML is made)."""

    def __init__(self) -> None:
        self._markup: list[str] = [""]
        self._texts: list[str] = []

    def tag(self, markup: str) -> None:
        self._markup[-1] += markup

    def text(self, text: str) -> None:
        self._texts.append(text)
        self._markup.append("")

    def element(self, opening: str, text: str, closing: str) -> None:
        self.tag(opening)
        self.text(text)
        self.tag(closing)

    def build(self) -> RichText:
        return RichText(tuple(self._markup), tuple(self._texts))


def _side_by_side(out: _RichTextBuilder, rows: list[tuple[str, str, str, str]]) -> None:
    """Logical beside physical work as one table: what, logical, physical, and what the physical figure means."""
    cell = "padding:1px 12px 1px 0; white-space:nowrap"
    out.tag("<table style='margin:4px 0 0 0' cellspacing='0'><tr><th></th>")
    out.element(f"<th align='right' style='{cell}; color:#37474f'>", "Logical", "</th>")
    out.element(f"<th align='right' style='{cell}; color:#b71c1c'>", "Physical", "</th></tr>")
    for what, logical, physical, result in rows:
        out.element("<tr><td colspan='3' style='padding-top:4px; color:#37474f'><b>", what, "</b></td></tr>")
        out.element(f"<tr><td width='10'></td><td align='right' style='{cell}; {_MONO}'>", logical, "</td>")
        out.element(f"<td align='right' style='{cell}; {_MONO}; color:#b71c1c'>", physical, "</td></tr>")
        out.element(f"<tr><td></td><td colspan='2' align='right' style='{cell}; color:#555'>", result, "</td></tr>")
    out.tag("</table>")


def derivation_rich_text(a: Analysis) -> RichText:
    """The derivation: label, then expression = result in monospace; notes below.

    Consecutive logical-versus-physical steps (an implementation model's
    work and bytes per interface) become one table with a Logical and a
    Physical column, so the two read side by side.
    """
    out = _RichTextBuilder()
    table: list[tuple[str, str, str, str]] = []
    for step in a.steps:
        if step.label.endswith(SIDE_BY_SIDE) and step.expression.count(" | ") == 1:
            logical, physical = step.expression.split(" | ")
            table.append((step.label[: -len(SIDE_BY_SIDE)], logical, physical, step.result))
            continue
        if table:
            _side_by_side(out, table)
            table = []
        out.element("<p style='margin:6px 0 0 0; color:#37474f'><b>", step.label, "</b></p>")
        out.element(f"<p style='margin:0 0 0 14px; {_MONO}'>", step.body, "</p>")
    if table:
        _side_by_side(out, table)
    if a.notes:
        out.element("<p style='margin-top:10px; color:#37474f'><b>", "Notes", "</b></p><ul style='margin-top:0; color:#444'>")
        for note in a.notes:
            out.element("<li>", note, "</li>")
        out.tag("</ul>")
    return out.build()


def derivation_html(a: Analysis) -> str:
    """The derivation as HTML (derivation_rich_text)."""
    return derivation_rich_text(a).html
