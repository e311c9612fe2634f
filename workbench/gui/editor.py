"""The declaration editor: one line of the declaration language and a form of its fields.

Both write to the document as edits of the line's text: typing in the line
stores what was typed; changing a form field replaces just that field's text
in the line (`workbench.model.declaration_text`), so nothing the user typed elsewhere is lost.
The form shows the text of each field as written in the line. An operation
with implementation models (`OpSpec.implementations`) gets an implementation
selector (compulsory / naive / tiled) writing `impl=`, and the tile sizes
`tile_m=`, `tile_n=`, `tile_k=` (and `ctas_per_sm=`) while it is tiled. A fault is
marked at the field it names (red border, tooltip) with the message under the
form; the last valid analysis stays on screen, marked stale, until it is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from workbench.model.declaration_text import CallText, split_call, with_field, with_positional, without_field
from workbench.model.declare import COMPULSORY, IMPL_PARAMS, LAUNCH_FIELDS, TILE_FIELDS, TILED, known_operations
from workbench.model.dtypes import DTYPES
from workbench.errors import DeclarationError, WorkbenchError
from workbench.gui.cached_frames import cached_frame_style
from workbench.gui.document import Document
from workbench.gui.plain_text import plain, tooltip
from workbench.gui.undo_keys import use_document_undo
from workbench.model.ops import REGISTRY, OpSpec, Param
from workbench.documents.session import OperationEntry

INVALID_STYLE = "border: 2px solid #c62828; border-radius: 3px; background: #fff5f5;"
FORM_COLUMNS = 3


def mark_invalid(widget: QWidget, message: str | None) -> None:
    """Red border and the message as tooltip; None clears both."""
    invalid = message is not None
    if bool(widget.property("invalid")) == invalid and (not invalid or widget.toolTip() == message):
        return
    widget.setProperty("invalid", invalid)
    widget.setStyleSheet(INVALID_STYLE if invalid else "")
    widget.setToolTip(tooltip(message if invalid else widget.property("help") or ""))


@dataclass(frozen=True)
class _FieldEdit:
    """The last edit made through a form field: which line it started from and which line it wrote."""

    entry: OperationEntry
    name: str
    base: str
    text: str
    written: str


class FieldEditor:
    """One form field bound to one parameter of the declaration."""

    def __init__(
        self, editor: "DeclarationEditor", param: Param, optional_hint: str = "", choices: tuple[str, ...] = ()
    ) -> None:
        self.editor = editor
        self.param = param
        self.label = QLabel(param.name)
        self.label.setToolTip(param.doc)
        self.widget: QWidget
        if choices:  # a name chosen from a list: the implementation model
            combo = QComboBox()
            for name in choices:
                combo.addItem(name, name)
            combo.activated.connect(self._choice_made)
            self.widget = combo
        elif param.kind == "dtype":
            combo = QComboBox()
            if not param.required:
                combo.addItem(optional_hint or "default", None)
            for name in DTYPES:
                combo.addItem(name, name)
            combo.activated.connect(self._dtype_chosen)
            self.widget = combo
        elif param.kind == "bool":
            box = QCheckBox()
            box.clicked.connect(self._bool_clicked)
            self.widget = box
        else:
            line = QLineEdit()
            if param.kind == "spec":
                line.setPlaceholderText("bmk,bkn->bmn")
            elif not param.required:
                line.setPlaceholderText(f"{param.default}" if param.default not in (None, "") else "default")
            line.textEdited.connect(self._text_edited)
            line.setStyle(cached_frame_style())  # its text follows every keystroke: the frame is drawn once
            use_document_undo(line, editor.document.undo_stack)
            self.widget = line
        self.widget.setObjectName(f"field_{param.name}")
        help_text = f"{param.name}: {param.doc}" if param.doc else param.name
        self.widget.setProperty("help", help_text)
        self.widget.setToolTip(tooltip(help_text))
        self.label.setBuddy(self.widget)

    # writing: each change becomes a text edit of the line
    def _text_edited(self, text: str) -> None:
        if self.param.kind == "spec":
            self.editor.write_positional(0, '"' + text.replace('"', "") + '"', self.param.name, typed=True)
        elif text.strip():
            self.editor.write_field(self.param.name, text.strip(), typed=True)
        else:
            self.editor.write_field(self.param.name, None, typed=True)

    def _dtype_chosen(self, index: int) -> None:
        combo = self.widget
        assert isinstance(combo, QComboBox)
        self.editor.write_field(self.param.name, combo.itemData(index))

    def _choice_made(self, index: int) -> None:
        combo = self.widget
        assert isinstance(combo, QComboBox)
        self.editor.write_implementation(str(combo.itemData(index)))

    def _bool_clicked(self, checked: bool) -> None:
        self.editor.write_field(self.param.name, "true" if checked else "false")

    # reading: show the field as the line writes it
    def show(self, text: str | None) -> None:
        widget = self.widget
        if isinstance(widget, QLineEdit):
            shown = (text or "").strip('"') if self.param.kind == "spec" else (text or "")
            if widget.text() != shown:
                widget.setText(shown)
        elif isinstance(widget, QComboBox):
            value = None if text is None else text.strip("\"'")
            index = widget.findData(value) if value is not None else (0 if not self.param.required else -1)
            if value is not None and index < 0:  # an alias or an unknown name: show it as typed
                index = widget.findText(value)
                if index < 0:
                    widget.addItem(value, value)
                    index = widget.count() - 1
            if widget.currentIndex() != index:
                widget.setCurrentIndex(index)
        elif isinstance(widget, QCheckBox):
            checked = (text or str(self.param.default)).strip().lower() == "true"
            if widget.isChecked() != checked:
                widget.setChecked(checked)


def implementation_params(spec: OpSpec) -> list[Param]:
    """The form's implementation fields for an operation with a choice of implementation: the selector, then the
    tile sizes where it can be tiled (the launch keywords, threads_per_block and the like, are typed in the line:
    they describe the user's own kernel); none for an operation with one implementation."""
    if len(spec.implementations) < 2:
        return []
    return [p for p in IMPL_PARAMS if p.name not in LAUNCH_FIELDS and (p.name == "impl" or TILED in spec.implementations)]


def form_rows(fields: int, implementation: int) -> int:
    """The rows a form takes: its fields FORM_COLUMNS to a row, then the implementation's fields from a new row on."""
    return -(-fields // FORM_COLUMNS) + -(-implementation // FORM_COLUMNS)


def most_form_rows() -> int:
    """The most rows an operation's form takes (as _build_form places its fields). Einsum's index extents, one
    field each, may add more."""
    return max(form_rows(len(spec.params), len(implementation_params(spec))) for spec in REGISTRY.values())


class DeclarationEditor(QWidget):
    """The declaration line, its form, and the message of the current fault."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.line = QLineEdit()
        self.line.setObjectName("declarationLine")
        self.line.setStyle(cached_frame_style())  # repainted on every keystroke: the frame is drawn once
        self.line.setPlaceholderText("gemm(M=4096, N=4096, K=4096, dtype=fp16)")
        self.set_base_font(self.font())
        self.line.setProperty("help", "One declaration, e.g. " + ", ".join(f"{op}(…)" for op in known_operations()))
        self.line.setToolTip(self.line.property("help"))
        self.line.textEdited.connect(self._line_edited)
        use_document_undo(self.line, document.undo_stack)
        line_label = QLabel("&Declaration")
        line_label.setBuddy(self.line)

        self.message = plain(QLabel())
        self.message.setObjectName("declarationMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setStyleSheet("color: #b71c1c; font-weight: 600;")
        self.message.setVisible(False)

        self.summary = plain(QLabel())
        self.summary.setObjectName("operationSummary")
        self.summary.setStyleSheet("color: #555;")

        self.form_frame = QFrame()
        self.form_frame.setObjectName("declarationForm")
        self.form = QGridLayout(self.form_frame)
        self.form.setContentsMargins(0, 2, 0, 2)
        self.form.setHorizontalSpacing(8)
        self.form.setVerticalSpacing(4)
        self.fields: dict[str, FieldEditor] = {}
        self._burst: _FieldEdit | None = None
        self._form_key: tuple[str, tuple[str, ...]] | None = None

        self.empty = QLabel("No operation selected. Add one with Edit ▸ Add operation (Ctrl+N) or open an example.")
        self.empty.setObjectName("editorEmpty")
        self.empty.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(line_label)
        top.addWidget(self.line, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 2)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.form_frame)
        layout.addWidget(self.message)
        layout.addWidget(self.empty)

        document.declaration_changed.connect(self._refresh_after_change)
        document.selection_changed.connect(self._refresh_after_change)
        document.analysis_changed.connect(self._refresh_after_change)
        document.operations_changed.connect(self._refresh_after_change)
        self.refresh()

    def set_base_font(self, font: QFont) -> None:
        """The declaration line in a monospace face at the window's text size."""
        mono = QFont("DejaVu Sans Mono")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        mono.setPointSizeF(font.pointSizeF() * 1.1)
        self.line.setFont(mono)

    # ------------------------------------------------------------------ writing
    def _line_edited(self, text: str) -> None:
        index = self.document.current
        if index >= 0:
            self.document.edit_declaration(index, text, source="line", typed=True)

    def write_field(self, name: str, text: str | None, typed: bool = False) -> None:
        """Set (or, with None, remove) one field in the current line; `typed`: as a keystroke in its box."""
        self._write(name, text, lambda line: without_field(line, name) if text is None else with_field(line, name, text), typed)

    def write_implementation(self, name: str) -> None:
        """Choose an implementation model in one edit (one undo step): `impl=` set, or removed for the
        default compulsory model; the tile sizes are kept while it stays tiled and removed otherwise."""

        def compose(line: str) -> str | None:
            composed: str | None = line
            if name != TILED:
                for tile in TILE_FIELDS:
                    composed = without_field(composed, tile) if composed is not None else None
            if composed is None:
                return None
            return without_field(composed, "impl") if name == COMPULSORY else with_field(composed, "impl", name)

        self._write("impl", name, compose)

    def write_positional(self, index: int, text: str, name: str, typed: bool = False) -> None:
        self._write(name, text, lambda line: with_positional(line, index, text), typed)

    def _write(self, name: str, text: str | None, compose: Callable[[str], str | None], typed: bool = False) -> None:
        """Compose the new line from the current one, or, while this field's text breaks the line's
        syntax, from the line as it was before the field's edit began (so each keystroke is kept)."""
        entry = self.document.current_entry
        if entry is None:
            return
        burst = self._active_burst(entry)
        if split_call(entry.declaration) is not None:
            base = entry.declaration
        elif burst is not None and burst.name == name:
            base = burst.base
        else:
            return  # the form is disabled while the line itself does not parse
        line = compose(base)
        if line is None:
            return
        self._burst = _FieldEdit(entry, name, base, text or "", line)
        self.document.edit_declaration(self.document.current, line, source=f"field:{name}", typed=typed)

    def _active_burst(self, entry: OperationEntry) -> "_FieldEdit | None":
        """The field edit that wrote the current line, if nothing changed the line since."""
        burst = self._burst
        if burst is not None and burst.entry is entry and burst.written == entry.declaration:
            return burst
        return None

    # ------------------------------------------------------------------ reading
    def _refresh_after_change(self, *_: object) -> None:
        """One refresh per document change, after all its signals (Document.after_changes)."""
        self.document.after_changes(self.refresh)

    def refresh(self, *_: object) -> None:
        entry = self.document.current_entry
        has_entry = entry is not None
        for widget in (self.line, self.form_frame, self.summary):
            widget.setVisible(has_entry)
        self.empty.setVisible(not has_entry)
        if entry is None:
            self.message.setVisible(False)
            return
        if self.line.text() != entry.declaration:
            self.line.setText(entry.declaration)
            if not self.line.hasFocus():
                self.line.setCursorPosition(0)  # show the start of a long line
        state = self.document.state(entry)
        error = state.error
        call = split_call(entry.declaration)
        burst = self._active_burst(entry) if call is None else None
        if burst is not None:
            # this field's text breaks the syntax: show the form as before, with the field as typed
            base = split_call(burst.base)
            assert base is not None
            fields = dict(base.fields)
            fields[burst.name] = burst.text
            call = CallText(base.op, base.positional, fields)
            error = DeclarationError(
                f"{burst.name}: '{burst.text}' is not a value; write a whole number such as 4096, "
                "or numbers with + - * // ** and parentheses such as 2**12",
                field=burst.name,
            )
        spec = REGISTRY.get(call.op) if call is not None else None
        if spec is not None and call is not None:
            extra = tuple(name for name in call.fields if spec.param(name) is None) if spec.extra_dims else ()
            self._build_form(spec, extra)
            tiled = (call.fields.get("impl") or "").strip("\"'") == TILED
            for name, field in self.fields.items():
                text = call.positional[0] if field.param.kind == "spec" and call.positional else call.fields.get(name)
                field.show(text)
                field.widget.setEnabled(burst is None or burst.name == name)
                if name in TILE_FIELDS:  # tile sizes belong to impl=tiled; a stray one stays visible to be fixed
                    shown = tiled or name in call.fields
                    field.label.setVisible(shown)
                    field.widget.setVisible(shown)
            self.summary.setText(f"{spec.name}: {spec.summary}")
        self.form_frame.setEnabled(spec is not None)
        if spec is None:
            self.summary.setText("Fix the declaration line to edit its fields here.")
        self._show_error(error)

    def _show_error(self, error: WorkbenchError | None) -> None:
        target = None
        if isinstance(error, DeclarationError) and error.field in self.fields:
            target = self.fields[error.field].widget
        for field in self.fields.values():
            mark_invalid(field.widget, str(error) if field.widget is target else None)
        mark_invalid(self.line, str(error) if error is not None and target is None else None)
        if error is None:
            self.message.setVisible(False)
            return
        self.message.setText(f"⚠ {error}")
        self.message.setVisible(True)

    def _build_form(self, spec: OpSpec, extra: tuple[str, ...]) -> None:
        key = (spec.name, extra)
        if key == self._form_key:
            return
        self._form_key = key
        while self.form.count():
            item = self.form.takeAt(0)
            widget = item.widget()
            if widget is not None:  # hide at once: deleteLater waits for the event loop
                widget.hide()
                widget.setParent(None)
                widget.deleteLater()
        self.fields = {}
        params = [*spec.params, *(Param(name, "dim", doc=f"extent of index {name}") for name in extra)]
        for position, param in enumerate(params):
            hint = ""
            if param.kind == "dtype" and not param.required:
                hint = "as dtype" if param.name in ("a", "b", "c") else "default"
            field = FieldEditor(self, param, hint)
            self.fields[param.name] = field
            row, column = divmod(position, FORM_COLUMNS)
            self.form.addWidget(field.label, row, column * 2, Qt.AlignmentFlag.AlignRight)
            self.form.addWidget(field.widget, row, column * 2 + 1)
        # the implementation from a row of its own: the selector, then beside and below it the tile sizes (shown
        # while tiled), so the tallest form (a tiled GEMM's or convolution's) takes a row less of the plots' height
        row = form_rows(len(params), 0)
        for position, param in enumerate(implementation_params(spec)):
            choices = spec.implementations if param.name == "impl" else ()
            field = FieldEditor(self, param, choices=choices)
            self.fields[param.name] = field
            at_row, column = divmod(position, FORM_COLUMNS)
            self.form.addWidget(field.label, row + at_row, column * 2, Qt.AlignmentFlag.AlignRight)
            self.form.addWidget(field.widget, row + at_row, column * 2 + 1)
        for column in range(FORM_COLUMNS):
            self.form.setColumnStretch(column * 2 + 1, 1)
        self._reserve_rows()

    def _reserve_rows(self) -> None:
        """The form is as tall as the tallest operation's, whichever operation it shows (and whether its tile sizes
        are shown): a form growing and shrinking with the selected operation moved the plot tabs' bar below it up
        and down, and a click meant for a tab landed on the plot."""
        heights = [field.widget.sizeHint().height() for field in self.fields.values()]
        if not heights:
            return
        rows = most_form_rows()
        margins = self.form.contentsMargins()
        least = margins.top() + margins.bottom() + rows * max(heights) + (rows - 1) * self.form.verticalSpacing()
        if self.form_frame.minimumHeight() != least:
            self.form_frame.setMinimumHeight(least)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # larger text, taller rows
            self._reserve_rows()
