"""The roofline drawn as SVG text, without Qt or a window: the reports' plot.

`roofline_svg(marks, state)` lays the labels and legend out (`roofline_scene`) in a plot of the given size and
draws everything the scenes decided: log-log axes with decade ticks and units, the roofs (`roofline_marks`), the
operations' points, the ridge, the labels, their leaders and the legend; and the other marks it is given
(`OtherMarks`: measured runs with their spread bars and labels, imported kernels with their dotted links), with
their legend rows, the operations' labels kept off them. Text is set in a monospaced font and
measured at a fixed advance per character (`FixedMeasure`), so every label fills the box the scene laid it out
in. Every text is XML-escaped and characters XML cannot hold are replaced: an operation's name is the user's
(or a shared session's) text and must show as text, never as markup.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

from workbench.scenes.label_layout import Box, MarkGrid, PixelView, clip_to_view, nearest_on_box
from workbench.scenes.plot_style import (
    COLOURS,
    DASHED,
    DOTTED,
    MARKS,
    PENS,
    Mark,
    decade_ticks,
    hex_colour,
    intensity_tick,
    si_tick_text,
)
from workbench.scenes.roofline_marks import OtherMarks, RooflineMarks
from workbench.scenes.roofline_scene import (
    KERNEL_RADIUS,
    MEASURED_RADIUS,
    LegendRow,
    RooflineInputs,
    RooflineScene,
    roofline_scene,
)
from workbench.scenes.roofline_state import RooflineViewState

FONT_SIZE = 12.0  # pixels: every text on the plot
ADVANCE = 0.6 * FONT_SIZE  # a monospaced character's advance at that size
LINE = 16.0  # a label's height, and a legend line's
PAD = 2.0  # pixels between a label's box and its text
BASELINE = PAD + 0.8 * FONT_SIZE  # from a box's top to its text's baseline
FONT = "'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace"
LEGEND_SAMPLE = 16.0  # pixels: a legend row's sample (a roof's line, an operation's mark)
LEGEND_GAP = 6.0  # between the sample and the text
LEGEND_PAD = 8.0  # inside the legend's frame
MARGINS = (96.0, 14.0, 18.0, 52.0)  # left (tick texts and the rotated title), top, right, bottom
OTHER_LABEL_GAP = 9.0  # pixels from a run's mark to its label's left edge
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """`text` as XML character data and attribute value: markup escaped, characters XML cannot hold replaced."""
    text = _NOT_XML.sub("\ufffd", text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&#39;")


def advance(text: str) -> float:
    """The width of one line of `text` in pixels: a fixed advance per character, two for a wide one (CJK), none
    for a combining mark."""
    total = 0.0
    for char in text:
        if unicodedata.combining(char):
            continue
        total += 2 * ADVANCE if unicodedata.east_asian_width(char) in ("W", "F") else ADVANCE
    return total


def label_width(text: str) -> float:
    """A label's width in pixels with `text` (a compute roof's, for the room `roofline_marks` leaves for it)."""
    return advance(text) + 2 * PAD


def plot_width(size: tuple[float, float]) -> float:
    """The plot area's width in a picture `size` pixels (width, height) wide (`roofline_marks`' `width`)."""
    return size[0] - MARGINS[0] - MARGINS[2]


class FixedMeasure:
    """The scene's text measures (`roofline_scene.Measure`) at a fixed advance per character; the legend also lists
    `extra` rows' texts (the other marks' kinds) after the scene's."""

    def __init__(self, extra: Sequence[str] = ()) -> None:
        self.extra = tuple(extra)

    def label(self, text: str) -> tuple[float, float]:
        return label_width(text), LINE

    def roof_label(self, key: str, full: str, short: str) -> tuple[float, float, float | None]:
        return label_width(full), LINE, (label_width(short) if short != full else None)

    def legend_text(self, text: str) -> float:
        return max((advance(line) for line in text.split("\n")), default=0.0)

    def legend(self, rows: Sequence[LegendRow]) -> tuple[float, float, int] | None:
        texts = [row.text for row in rows] + list(self.extra)
        if not texts:
            return None
        lines = sum(len(text.split("\n")) for text in texts)
        width = max(self.legend_text(text) for text in texts) + LEGEND_SAMPLE + LEGEND_GAP + 2 * LEGEND_PAD
        return width, lines * LINE + 2 * LEGEND_PAD, len(texts)


@dataclass(frozen=True)
class Frame:
    """Where the plot area lies in the picture: its left and top edges, in pixels."""

    left: float
    top: float


def plot_view(marks: RooflineMarks, size: tuple[float, float]) -> tuple[PixelView, Frame]:
    """The plot area of a picture `size` pixels (width, height) showing `marks`' range, and where it lies."""
    left, top, _right, bottom = MARGINS
    x_low, x_high, y_low, y_high = marks.range
    return PixelView(x_low, x_high, y_low, y_high, plot_width(size), size[1] - top - bottom), Frame(left, top)


def roofline_svg(marks: RooflineMarks, state: RooflineViewState = RooflineViewState(),
                 size: tuple[float, float] = (960.0, 600.0), pins: Sequence[int] = (),
                 title: str = "Roofline plot", others: OtherMarks = OtherMarks()) -> str:
    """The roofline of `marks` as one `<svg>` element `size` pixels (width, height), its labels and legend laid
    out by the scene in `state`'s label mode and legend corner (`pins`: rows whose labels are pinned), with
    `others` (runs, kernels) and their legend rows. Made with `roofline_marks(..., width=plot_width(size),
    text_width=label_width, others=others.extent())`, the range shows `others` and leaves the compute roofs'
    labels room right of the points."""
    view, frame = plot_view(marks, size)
    measure = FixedMeasure([text for _, text in others.legend])
    inputs = marks.scene_inputs(view, measure, pins)
    if others.marks:
        _keep_labels_off(inputs, others, view)
    scene = roofline_scene(inputs, state, measure, fresh=True)
    return draw_svg(marks, scene, size, frame, title, others)


def _keep_labels_off(inputs: RooflineInputs, others: OtherMarks, view: PixelView) -> None:
    """Hand the scene the other marks (each mark and bar) and their labels' boxes, in pixels: labels keep off them."""
    boxes: list[Box] = []
    labels: list[Box] = []
    for mark in others.marks:
        x, y = view.px(mark.x), view.py(mark.y)
        r = MEASURED_RADIUS if mark.role.startswith("run") else KERNEL_RADIUS
        boxes.append((x - r, y - r, x + r, y + r))
        if mark.low is not None and mark.high is not None:
            boxes.append((x - 2.0, view.py(mark.high), x + 2.0, view.py(mark.low)))
        if mark.label:
            labels.append(_other_label_box(mark.label, x, y))
    inputs.other_marks = MarkGrid(boxes, view.width, view.height)
    inputs.run_label_marks = labels


def _other_label_box(text: str, x: float, y: float) -> Box:
    """The box of a run's label, right of its mark at (x, y) pixels, centred on its height."""
    return x + OTHER_LABEL_GAP, y - LINE / 2, x + OTHER_LABEL_GAP + label_width(text), y + LINE / 2


def draw_svg(marks: RooflineMarks, scene: RooflineScene, size: tuple[float, float], frame: Frame, title: str,
             others: OtherMarks = OtherMarks()) -> str:
    """`marks`, `others` and `scene` (laid out in the plot area at `frame`) drawn as one `<svg>` element."""
    width, height = size
    view = scene.view
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
        f'viewBox="0 0 {width:g} {height:g}" role="img" aria-label="{xml_text(title)}" '
        f'font-family="{xml_text(FONT)}" font-size="{FONT_SIZE:g}">',
        f"<title>{xml_text(title)}</title>",
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        f'<defs><clipPath id="plot-area"><rect x="0" y="0" width="{view.width:.1f}" height="{view.height:.1f}"/>'
        "</clipPath></defs>",
    ]
    parts += _axes(marks, view, frame)
    parts.append(f'<g transform="translate({frame.left:g},{frame.top:g})">')
    parts.append('<g clip-path="url(#plot-area)">')
    parts += _lines(marks, view)
    parts += _points(marks, view)
    if others.marks:
        parts += _other_marks(others, view)
    parts.append("</g>")
    parts += _labels(marks, scene, view)
    if others.marks:
        parts += _other_labels(others, view)
    parts += _legend(marks, scene, others)
    parts.append("</g></svg>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------- axes


def _axes(marks: RooflineMarks, view: PixelView, frame: Frame) -> list[str]:
    """The grid at whole decades, the frame, the tick texts with units and the axes' titles."""
    left, top = frame.left, frame.top
    grid = hex_colour(COLOURS["grid"])
    axis = hex_colour(COLOURS["axis"])
    xs = [(v, intensity_tick(v)) for v in decade_ticks(view.x_low, view.x_high, view.width, 0.0)]
    need = max((advance(text) for _, text in xs), default=0.0) + 2 * ADVANCE
    xs = [(v, intensity_tick(v)) for v in decade_ticks(view.x_low, view.x_high, view.width, max(need, 48.0))]
    ys = [(v, si_tick_text(v, "FLOP/s")) for v in decade_ticks(view.y_low, view.y_high, view.height, 1.6 * LINE)]
    parts = [f'<g stroke="{grid}" stroke-width="1">']
    for v, _ in xs:
        x = left + view.px(v)
        parts.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{top + view.height:.1f}"/>')
    for v, _ in ys:
        y = top + view.py(v)
        parts.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{left + view.width:.1f}" y2="{y:.1f}"/>')
    parts.append("</g>")
    parts.append(f'<rect x="{left:.1f}" y="{top:.1f}" width="{view.width:.1f}" height="{view.height:.1f}" '
                 f'fill="none" stroke="{axis}" stroke-width="1"/>')
    parts.append(f'<g fill="{axis}" class="ticks">')
    bottom = top + view.height
    for v, text in xs:
        x = left + view.px(v)
        parts.append(f'<line x1="{x:.1f}" y1="{bottom:.1f}" x2="{x:.1f}" y2="{bottom + 4:.1f}" stroke="{axis}"/>')
        parts.append(f'<text x="{x:.1f}" y="{bottom + 6 + FONT_SIZE:.1f}" text-anchor="middle">{xml_text(text)}</text>')
    for v, text in ys:
        y = top + view.py(v)
        parts.append(f'<line x1="{left - 4:.1f}" y1="{y:.1f}" x2="{left:.1f}" y2="{y:.1f}" stroke="{axis}"/>')
        parts.append(f'<text x="{left - 7:.1f}" y="{y + 0.35 * FONT_SIZE:.1f}" text-anchor="end">{xml_text(text)}</text>')
    parts.append("</g>")
    x_title = x_axis_title(marks)
    parts.append(f'<text class="axis-title" x="{left + view.width / 2:.1f}" y="{bottom + 2 * FONT_SIZE + 14:.1f}" '
                 f'text-anchor="middle" fill="{axis}">{xml_text(x_title)}</text>')
    cy = top + view.height / 2
    parts.append(f'<text class="axis-title" x="{FONT_SIZE + 2:.1f}" y="{cy:.1f}" text-anchor="middle" fill="{axis}" '
                 f'transform="rotate(-90 {FONT_SIZE + 2:.1f} {cy:.1f})">Attainable rate (FLOP/s)</text>')
    return parts


def x_axis_title(marks: RooflineMarks) -> str:
    """The x axis's title: FLOP per byte across each interface where further levels are shown, else per byte of
    the device's memory."""
    if marks.further_keys:
        return "Arithmetic intensity (FLOP per byte across each interface)"
    return f"Arithmetic intensity (FLOP/B, compulsory {marks.memory_name} bytes)"


# ---------------------------------------------------------------------------------------------- lines and points


def _stroke(role: str, dashed: bool = False) -> str:
    """A pen role's stroke attributes (dashed: the rate is an assumption, whatever the role's own dash)."""
    pen = PENS[role]
    dash = DASHED if dashed else pen.dash
    text = f'stroke="{hex_colour(COLOURS[pen.colour])}" stroke-width="{pen.width:g}" fill="none"'
    if dash == DASHED:
        text += ' stroke-dasharray="7 4"'
    elif dash == DOTTED:
        text += ' stroke-dasharray="1.5 3"'
    return text


def _segment(view: PixelView, segment: Box, attributes: str, css: str = "") -> str:
    clipped = clip_to_view(view.segment(segment), view.width, view.height)
    if clipped is None:
        return ""
    x1, y1, x2, y2 = clipped
    extra = f' class="{css}"' if css else ""
    return f'<line{extra} x1="{x1:.2f}" y1="{y1:.2f}" x2="{x2:.2f}" y2="{y2:.2f}" {attributes}/>'


def _lines(marks: RooflineMarks, view: PixelView) -> list[str]:
    """The ridge's vertical, the roofs (ghosts first, the selected path's last), the lowered roofs and the line
    joining the selected operation's points."""
    parts = []
    if marks.ridge_line is not None:
        parts.append(_segment(view, marks.ridge_line, _stroke("ridge"), "ridge"))
    ordered = sorted(marks.roofs, key=lambda roof: roof.role != "ghost")
    for roof in ordered:
        parts.append(_segment(view, roof.segment, _stroke(roof.role, roof.dashed),
                              f"roof {roof.role.replace(' ', '-')}"))
    for lowered in marks.lowered:
        parts.append(_segment(view, lowered.segment, _stroke("lowered"), "lowered"))
    if marks.connector is not None:
        parts.append(_segment(view, marks.connector, _stroke("connector"), "connector"))
    return [part for part in parts if part]


def _symbol(mark: Mark, x: float, y: float, css: str, data: str = "") -> str:
    """A point's mark centred at (x, y) pixels."""
    edge = hex_colour(COLOURS[mark.edge])
    fill = hex_colour(COLOURS[mark.fill]) if mark.fill is not None else "#ffffff"
    paint = f'class="{css}"{data} fill="{fill}" stroke="{edge}" stroke-width="1.5"'
    r = mark.size / 2
    if mark.symbol == "square":
        return f'<rect {paint} x="{x - r:.2f}" y="{y - r:.2f}" width="{2 * r:.2f}" height="{2 * r:.2f}"/>'
    if mark.symbol == "diamond":
        return f'<polygon {paint} points="{x:.2f},{y - r:.2f} {x + r:.2f},{y:.2f} {x:.2f},{y + r:.2f} {x - r:.2f},{y:.2f}"/>'
    if mark.symbol == "x":  # two strokes in the edge's colour
        return (f'<path class="{css}"{data} fill="none" stroke="{edge}" stroke-width="2.5" '
                f'd="M{x - r:.2f},{y - r:.2f}L{x + r:.2f},{y + r:.2f}M{x - r:.2f},{y + r:.2f}L{x + r:.2f},{y - r:.2f}"/>')
    if mark.symbol == "star":
        return f'<polygon {paint} points="{_star(x, y, r)}"/>'
    if mark.symbol == "triangle":
        return f'<polygon {paint} points="{x:.2f},{y - r:.2f} {x + r:.2f},{y + 0.7 * r:.2f} {x - r:.2f},{y + 0.7 * r:.2f}"/>'
    return f'<circle {paint} cx="{x:.2f}" cy="{y:.2f}" r="{r:.2f}"/>'


def _star(x: float, y: float, r: float) -> str:
    """A five-pointed star's corners around (x, y), pointing up, `r` pixels to its tips."""
    corners = []
    for index in range(10):
        radius = r if index % 2 == 0 else 0.45 * r
        angle = math.pi * index / 5
        corners.append(f"{x + radius * math.sin(angle):.2f},{y - radius * math.cos(angle):.2f}")
    return " ".join(corners)


def _other_marks(others: OtherMarks, view: PixelView) -> list[str]:
    """The other marks in the plot area: the kernels' dotted links first, then the runs' spread bars, then every
    mark (in their order: the window's draws valid runs under the flagged ones)."""
    links, bars, symbols = [], [], []
    for mark in others.marks:
        if mark.link is not None:
            links.append(_segment(view, (mark.x, mark.y, *mark.link), _stroke("kernel link"), "kernel-link"))
        if mark.low is not None and mark.high is not None and mark.bar:
            bars.append(_segment(view, (mark.x, mark.low, mark.x, mark.high), _stroke(mark.bar), "run-bar"))
        x, y = view.px(mark.x), view.py(mark.y)
        if 0 <= x <= view.width and 0 <= y <= view.height:
            symbols.append(_symbol(MARKS[mark.role], x, y, mark.role.replace(" ", "-")))
    return [part for part in links + bars if part] + symbols


def _other_labels(others: OtherMarks, view: PixelView) -> list[str]:
    """The short labels beside the runs that are not valid results, in their mark's colour."""
    parts = []
    for mark in others.marks:
        if mark.label:
            box = _other_label_box(mark.label, view.px(mark.x), view.py(mark.y))
            parts += _text(box, mark.label, hex_colour(COLOURS[MARKS[mark.role].edge]), "run-label")
    return parts


def _points(marks: RooflineMarks, view: PixelView) -> list[str]:
    """Every operation's points (those at further levels under the labelled ones, the selected operation's on top)
    and the ridge point."""
    points = marks.points
    roles = points.roles()
    xs = (points.xs - view.x_low) * view.per_x
    ys = (view.y_high - points.ys) * view.per_y
    order = sorted(range(len(points)), key=lambda i: (bool(points.selected[i]), bool(points.primary[i])))
    parts = []
    for i in order:
        x, y = float(xs[i]), float(ys[i])
        if 0 <= x <= view.width and 0 <= y <= view.height:
            parts.append(_symbol(MARKS[roles[i]], x, y, "point", f' data-row="{int(points.rows[i])}"'))
    if marks.ridge is not None:
        parts.append(_symbol(MARKS["ridge"], view.px(marks.ridge[0]), view.py(marks.ridge[1]), "ridge-point"))
    return parts


# ---------------------------------------------------------------------------------------------- labels and legend


def _text(box: Box, text: str, colour: str, css: str, ground: bool = False) -> list[str]:
    """A label's text in its box (on a white ground that breaks the line under it, where it lies on its roof)."""
    parts = []
    if ground:
        parts.append(f'<rect x="{box[0]:.1f}" y="{box[1]:.1f}" width="{box[2] - box[0]:.1f}" height="{box[3] - box[1]:.1f}" '
                     'fill="#ffffff" fill-opacity="0.92"/>')
    parts.append(f'<text class="{css}" x="{box[0] + PAD:.1f}" y="{box[1] + BASELINE:.1f}" fill="{colour}" '
                 f'xml:space="preserve">{xml_text(text)}</text>')
    return parts


def _labels(marks: RooflineMarks, scene: RooflineScene, view: PixelView) -> list[str]:
    """The leaders, the roofs' and operations' labels where the scene placed them, the ridge's, and the lowered
    roofs' names left of their points."""
    roof_colour = {roof.key: hex_colour(COLOURS[PENS[roof.role].colour]) for roof in marks.roofs}
    stale = {row: flag for row, flag in zip(marks.rows, marks.stale)}
    leader = _stroke("leader")
    parts = []
    for label in scene.labels:
        if label.box is not None and label.leader_to is not None:
            (ax, ay), (bx, by) = label.leader_to, nearest_on_box(label.box, *label.leader_to)
            parts.append(f'<line class="leader" x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" {leader}/>')
    for label in scene.labels:
        if label.box is None:
            continue
        if label.key in roof_colour:
            parts += _text(label.box, label.text, roof_colour[label.key], "roof-label", label.on_roof)
            continue
        row = int(label.key.rsplit(" ", 1)[1])
        colour = "stale" if stale.get(row) else "selected" if row == marks.current else "label"
        parts += _text(label.box, label.text, hex_colour(COLOURS[colour]), "operation-label")
    if scene.ridge is not None and scene.ridge.box is not None:
        parts += _text(scene.ridge.box, scene.ridge.text, hex_colour(COLOURS["note"]), "ridge-label")
    measure = FixedMeasure()
    for lowered in marks.lowered:
        w, h = measure.label(lowered.text)
        x, y = view.px(lowered.at[0]), view.py(lowered.at[1])
        parts += _text((x, y - h, x + w, y), lowered.text, hex_colour(COLOURS["lowered"]), "lowered-label")
    return parts


def _legend(marks: RooflineMarks, scene: RooflineScene, others: OtherMarks = OtherMarks()) -> list[str]:
    """The legend in its corner: a sample and the text of each row (a row of two lines takes two), then the other
    marks' rows."""
    legend = scene.legend
    if legend is None:
        return []
    x0, y0, x1, y1 = legend.box
    frame = hex_colour(COLOURS["frame"])
    parts = [f'<g class="legend"><rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
             f'fill="#ffffff" fill-opacity="0.95" stroke="{frame}" stroke-width="1"/>']
    roles = {roof.key: roof for roof in marks.roofs}
    y = y0 + LEGEND_PAD
    for row in legend.rows:
        # a picture cannot be hovered: the count of operations without a label says only how many
        text = row.text.replace(" (hover for names)", "") if row.key == "more" else row.text
        lines = text.split("\n")
        middle = y + LINE / 2
        sample_x = x0 + LEGEND_PAD
        roof = roles.get(row.key) if row.kind == "roof" else None
        if roof is not None:
            parts.append(f'<line x1="{sample_x:.1f}" y1="{middle:.1f}" x2="{sample_x + LEGEND_SAMPLE:.1f}" '
                         f'y2="{middle:.1f}" {_stroke(roof.role, roof.dashed)}/>')
        elif row.key != "more":
            role = "operation selected" if row.selected else "operation"
            parts.append(_symbol(MARKS[role], sample_x + LEGEND_SAMPLE / 2, middle, "legend-point"))
        colour = hex_colour(COLOURS["selected" if row.selected else "label"])
        for line in lines:
            text_box = (sample_x + LEGEND_SAMPLE + LEGEND_GAP - PAD, y, x1, y + LINE)
            parts += _text(text_box, line, colour, "legend-text")
            y += LINE
    label = hex_colour(COLOURS["label"])
    for role, text in others.legend:
        sample_x = x0 + LEGEND_PAD
        parts.append(_symbol(MARKS[role], sample_x + LEGEND_SAMPLE / 2, y + LINE / 2, "legend-point"))
        for line in text.split("\n"):
            parts += _text((sample_x + LEGEND_SAMPLE + LEGEND_GAP - PAD, y, x1, y + LINE), line, label, "legend-text")
            y += LINE
    parts.append("</g>")
    return parts

