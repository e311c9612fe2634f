"""Export a plot as PNG or SVG, and render a session's roofline for reports.

pyqtgraph 0.14.0's own SVG exporter fails with PySide6 6.11/6.12 (it chokes
on paths ending in Z), so SVG is drawn here with Qt's QSvgGenerator, painting
the plot widget's scene directly; PNG renders the same scene into an image.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QIODevice, QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsView

from workbench.errors import WorkbenchError
from workbench.documents.session import Session

PNG_SCALE = 2  # pixels per screen pixel: sharp enough for slides
REPORT_PLOT_SIZE = (960, 600)  # logical pixels of the roofline embedded in reports


class ExportError(WorkbenchError):
    """A plot that could not be written."""


def _source(view: QGraphicsView) -> QRectF:
    return view.mapToScene(view.viewport().rect()).boundingRect()


def render_image(view: QGraphicsView, scale: int = PNG_SCALE) -> QImage:
    """The plot's scene at `scale`× its on-screen size, on white."""
    source = _source(view)
    size = QSize(max(int(source.width() * scale), 1), max(int(source.height() * scale), 1))
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    view.scene().render(painter, QRectF(0, 0, size.width(), size.height()), source)
    painter.end()
    return image


def export_png(view: QGraphicsView, path: str | Path, scale: int = PNG_SCALE) -> None:
    """Render the plot at `scale`× its on-screen size into a PNG file."""
    if not render_image(view, scale).save(str(path), "PNG"):
        raise ExportError(f"could not write {path}")


def png_bytes(view: QGraphicsView, scale: int = PNG_SCALE) -> bytes:
    """The plot as PNG file contents (for reports, which embed it)."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not render_image(view, scale).save(buffer, "PNG"):
        raise ExportError("could not encode the plot as PNG")
    return bytes(buffer.data().data())


def legend_text_size(font: Any) -> str:
    """The legend's text size for labels drawn in `font`: the same points ('11pt')."""
    return f"{max(font.pointSizeF(), 6):.0f}pt"


def match_legend_to_labels(plot: Any, font: Any) -> None:
    """Write the legend's rows at the labels' size (pyqtgraph's legend keeps its own 9 pt otherwise,
    which a report shows much smaller than the roof and point labels beside it)."""
    legend = plot.legend
    if legend is None:
        return
    size = legend_text_size(font)
    legend.setLabelTextSize(size)
    for _, label in legend.items:
        label.setText(label.text, size=size)  # setLabelTextSize alone does not redraw existing rows
    legend.updateSize()


def session_plot_png(session: Session, size: tuple[int, int] = REPORT_PLOT_SIZE, scale: int = PNG_SCALE) -> bytes:
    """A session's roofline rendered offscreen to PNG bytes (what `workbench report` embeds).

    Creates the QApplication when there is none (the CLI sets QT_QPA_PLATFORM=offscreen
    first when there is no display); the view is never shown.
    """
    from workbench.gui.application import ensure_application
    from workbench.gui.document import Document
    from workbench.gui.roofline_view import RooflineView

    app = ensure_application()
    document = Document(session)
    view = RooflineView(document)
    view.resize(*size)
    # Grabbing a hidden widget delivers its pending resize events and lays it out at `size`
    # (axes, roof labels) without showing a window, which the offscreen platform would complain about.
    view.grab()
    app.processEvents()
    match_legend_to_labels(view.plot, app.font())
    view.grab()
    app.processEvents()
    return png_bytes(view.widget, scale)


def export_svg(view: QGraphicsView, path: str | Path, title: str = "Performance Workbench plot") -> None:
    """Paint the plot's scene into an SVG file with QSvgGenerator (vector lines and text)."""
    from PySide6.QtSvg import QSvgGenerator

    source = _source(view)
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(int(source.width()), int(source.height())))
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle(title)
    generator.setDescription("Exported by Performance Workbench")
    painter = QPainter()
    if not painter.begin(generator):
        raise ExportError(f"could not write {path}")
    painter.fillRect(QRectF(0, 0, source.width(), source.height()), Qt.GlobalColor.white)
    view.scene().render(painter, QRectF(0, 0, source.width(), source.height()), source)
    painter.end()
    if not Path(path).is_file() or Path(path).stat().st_size == 0:
        raise ExportError(f"could not write {path}")
