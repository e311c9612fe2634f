"""Export a plot as PNG or SVG (the reports draw their roofline without Qt: `workbench.documents.report.plot`).

pyqtgraph 0.14.0's own SVG exporter fails with PySide6 6.11/6.12 (it chokes
on paths ending in Z), so SVG is drawn here with Qt's QSvgGenerator, painting
the plot widget's scene directly; PNG renders the same scene into an image.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsView

from workbench.errors import WorkbenchError

PNG_SCALE = 2  # pixels per screen pixel: sharp enough for slides


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
