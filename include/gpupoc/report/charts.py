"""Inline SVG charts (no scripts, no external fonts or styles), fed with already-aggregated data."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Callable

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
FONT = 'font-family="sans-serif" font-size="11"'


def svg_doc(w: int, h: int, body: list[str], title: str) -> str:
    """A standalone SVG of ``body`` with its title for screen readers and tooltips."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-label="{escape(title)}"><title>{escape(title)}</title>' + "".join(body) + "</svg>")


def nice_max(v: float) -> float:
    """The axis end: the smallest 1, 2, 4, 5, 8 or 10 times a power of ten at or above ``v``."""
    if v <= 0 or math.isnan(v):
        return 1.0
    mag = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 4, 5, 8, 10):  # a quarter of each is a round tick
        if v <= m * mag:
            return m * mag
    return 10 * mag


def tick_label(v: float) -> str:
    """An axis number: whole from 10 on, two significant digits below."""
    return f"{v:.0f}" if abs(v) >= 10 or v == int(v) else f"{v:.2g}"


def empty(title: str, message: str) -> str:
    return svg_doc(480, 40, [f'<text x="8" y="24" {FONT}>{escape(message)}</text>'], title)


def grouped_bars(title: str, categories: list[str], series: dict[str, list[float]], y_label: str = "",
                 no_data: str = "no data", sep: str = ": ") -> str:
    """One group of bars per category, one bar per series (``sep``: between a tooltip's label and value)."""
    if not categories or not series:
        return empty(title, no_data)
    gw_min = max(110, 28 * len(series) + 20, 7 * max(len(c) for c in categories) + 12)
    w, h, left, bottom, top = min(1000, max(360, gw_min * len(categories) + 180)), 260, 50, 40, 24
    ymax = nice_max(max((v for vals in series.values() for v in vals if v == v), default=0))
    pw, ph = w - left - 130, h - bottom - top
    gw = pw / len(categories)
    bw = gw * 0.8 / len(series)
    body = [f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>',
            f'<text x="4" y="{top - 8}" {FONT}>{escape(y_label)}</text>']
    for k in range(5):
        y = top + ph - ph * k / 4
        body.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" {FONT}>{tick_label(ymax * k / 4)}</text>'
                    f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#eee"/>')
    for i, cat in enumerate(categories):
        x0 = left + gw * i + gw * 0.1
        for j, (name, vals) in enumerate(series.items()):
            v = vals[i] if i < len(vals) and vals[i] == vals[i] else 0.0
            bh = ph * v / ymax
            body.append(f'<rect x="{x0 + j * bw:.1f}" y="{top + ph - bh:.1f}" width="{bw * 0.95:.1f}" '
                        f'height="{bh:.1f}" fill="{PALETTE[j % len(PALETTE)]}"><title>{escape(cat)} / '
                        f'{escape(name)}{escape(sep)}{tick_label(v)}</title></rect>')
        body.append(f'<text x="{left + gw * (i + 0.5):.1f}" y="{top + ph + 14}" text-anchor="middle" {FONT}>'
                    f'{escape(cat)}</text>')
    body += _legend(list(series), left + pw + 10, top)
    return svg_doc(w, h, body, title)


def stacked_bars(title: str, categories: list[str], series: dict[str, list[float]], y_label: str = "",
                 no_data: str = "no data", sep: str = ": ", colours: dict[str, str] | None = None,
                 x_label: str = "", value_text: Callable[[float], str] = tick_label) -> str:
    """One bar per category (a time bucket), the series stacked in order, each part's tooltip its value (as
    ``value_text`` writes it); ``colours`` fixes a series' colour (the rest take the palette's in turn)."""
    if not categories or not series:
        return empty(title, no_data)
    fill = dict(colours or {})
    free = iter(c for c in PALETTE * (len(series) // len(PALETTE) + 1) if c not in fill.values())
    fill = {name: fill.get(name) or next(free) for name in series}
    totals = [sum(max(vals[i], 0.0) for vals in series.values() if i < len(vals) and vals[i] == vals[i])
              for i in range(len(categories))]
    ymax = nice_max(max(totals, default=0))
    left, top, bottom = 56, 24, 44
    legend, lh = _legend_rows(fill, left, 4, 700 - left - 16)
    top += lh
    w, h = 700, int(top + 180 + bottom)
    pw, ph = w - left - 16, 180
    bw = pw / len(categories)
    body = legend + [f'<text x="4" y="{top - 8}" {FONT}>{escape(y_label)}</text>']
    for k in range(5):
        y = top + ph - ph * k / 4
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#eee"/><text x="{left - 4}"'
                    f' y="{y + 4:.1f}" text-anchor="end" {FONT}>{tick_label(ymax * k / 4)}</text>')
    for i, cat in enumerate(categories):
        base = 0.0
        for name, vals in series.items():
            v = vals[i] if i < len(vals) and vals[i] == vals[i] else 0.0
            if v <= 0:
                continue
            y0, y1 = top + ph - ph * (base + v) / ymax, top + ph - ph * base / ymax
            body.append(f'<rect x="{left + bw * i + bw * 0.1:.1f}" y="{y0:.1f}" width="{bw * 0.8:.1f}" '
                        f'height="{y1 - y0:.1f}" fill="{fill[name]}"><title>{escape(cat)} / {escape(name)}'
                        f'{escape(sep)}{escape(value_text(v))}</title></rect>')
            base += v
    step = max(1, math.ceil((_text_width(max(categories, key=len)) + 8) / bw))
    for i in range(0, len(categories), step):
        body.append(f'<text x="{left + bw * (i + 0.5):.1f}" y="{top + ph + 14}" text-anchor="middle" {FONT}>'
                    f'{escape(categories[i])}</text>')
    body.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>'
                f'<text x="{left + pw}" y="{top + ph + 32}" text-anchor="end" {FONT}>{escape(x_label)}</text>')
    return svg_doc(w, h, body, title)


def _legend(names: list[str], x: float, y: float) -> list[str]:
    out = []
    for j, name in enumerate(names):
        out.append(f'<rect x="{x}" y="{y + 16 * j}" width="10" height="10" fill="{PALETTE[j % len(PALETTE)]}"/>'
                   f'<text x="{x + 14}" y="{y + 16 * j + 9}" {FONT}>{escape(name)}</text>')
    return out


def _text_width(text: str) -> float:
    """Roughly how wide ``text`` is at the charts' 11 px font (a CJK character twice a Latin one)."""
    return sum(11.0 if ord(ch) > 0x2E80 else 6.2 for ch in text)


def _legend_row(legend: dict[str, str], x: float, y: float) -> list[str]:
    out = []
    for name, colour in legend.items():
        out.append(f'<rect x="{x:.1f}" y="{y}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{x + 14:.1f}" y="{y + 9}" {FONT}>{escape(name)}</text>')
        x += 14 + _text_width(name) + 14
    return out


def timeline(title: str, rows: list[tuple[str, list[tuple[float, float, str, str]]]], legend: dict[str, str],
             x_label: str = "s", no_data: str = "no data") -> str:
    """One line per row, its full name on the left; each segment (start, end, colour, tooltip) in seconds from
    the axis's origin, which ``x_label`` names."""
    rows = rows[:80]
    if not rows:
        return empty(title, no_data)
    xmax = nice_max(max((e for _, segs in rows for _, e, _, _ in segs), default=1))
    left = min(420.0, max(80.0, max(_text_width(label) for label, _ in rows) + 12))
    top, rh = 24, 12
    w, h = int(left + 620), top + rh * len(rows) + 40
    pw = w - left - 20
    body = []
    for k in range(6):
        x = left + pw * k / 5
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{h - 30}" stroke="#eee"/>'
                    f'<text x="{x:.1f}" y="{h - 16}" text-anchor="middle" {FONT}>{tick_label(xmax * k / 5)}</text>')
    body.append(f'<text x="{left + pw}" y="{h - 2}" text-anchor="end" {FONT}>{escape(x_label)}</text>')
    for i, (label, segs) in enumerate(rows):
        y = top + rh * i
        body.append(f'<text x="{left - 4}" y="{y + rh - 3}" text-anchor="end" {FONT}>{escape(label)}</text>')
        for s, e, colour, tip in segs:
            body.append(f'<rect x="{left + pw * s / xmax:.1f}" y="{y + 1}" width="{max(1.0, pw * (e - s) / xmax):.1f}"'
                        f' height="{rh - 2}" fill="{colour}"><title>{escape(tip)}</title></rect>')
    body += _legend_row(legend, left, 4)
    return svg_doc(w, h, body, title)


def heatmap(title: str, rows: list[str], cols: list[str], values: list[list[float]], vmax: float = 100.0,
            x_label: str = "", scale_label: str = "", no_data: str = "no data", sep: str = ": ") -> str:
    """Rows x columns of values 0..vmax (e.g. team x time utilization %); blank cells are missing data;
    ``x_label`` says what a column is, ``scale_label`` what the colour scale measures."""
    if not rows or not cols:
        return empty(title, no_data)
    left, top = max(120.0, max(_text_width(r) for r in rows) + 12), 20
    cw = max(3.0, min(64.0, 620 / len(cols)))
    ch = 18
    w, h = int(left + cw * len(cols) + 20), top + ch * len(rows) + 66
    body = []
    for i, r in enumerate(rows):
        body.append(f'<text x="{left - 4}" y="{top + ch * i + 13}" text-anchor="end" {FONT}>{escape(r)}</text>')
        for j, c in enumerate(cols):
            v = values[i][j]
            if v is None or v != v:
                continue
            a = max(0.05, min(1.0, v / vmax))
            body.append(f'<rect x="{left + cw * j:.1f}" y="{top + ch * i}" width="{cw:.1f}" height="{ch - 1}" '
                        f'fill="#1f77b4" fill-opacity="{a:.2f}"><title>{escape(r)} {escape(c)}{escape(sep)}'
                        f'{tick_label(v)}</title></rect>')
    step = max(1, math.ceil((_text_width(max(cols, key=len)) + 8) / cw))
    for j in range(0, len(cols), step):
        body.append(f'<text x="{left + cw * j:.1f}" y="{top + ch * len(rows) + 14}" {FONT}>{escape(cols[j])}</text>')
    if x_label:
        body.append(f'<text x="{left}" y="{top + ch * len(rows) + 30}" {FONT}>{escape(x_label)}</text>')
    for k in range(5):  # colour scale
        body.append(f'<rect x="{left + 40 * k}" y="{h - 16}" width="40" height="10" fill="#1f77b4" '
                    f'fill-opacity="{max(0.05, k / 4):.2f}"/><text x="{left + 40 * k}" y="{h - 19}" {FONT}>'
                    f'{tick_label(vmax * k / 4)}</text>')
    if scale_label:
        body.append(f'<text x="{left + 210}" y="{h - 7}" {FONT}>{escape(scale_label)}</text>')
    width = max(w, left + 220 + _text_width(scale_label), left + _text_width(x_label) + 10)
    return svg_doc(int(width), h, body, title)


def lines(title: str, x_labels: list[str], series: dict[str, list[float | None]], y_max: float | None = None,
          no_data: str = "no data") -> str:
    """One polyline per series over ordinal x (e.g. runs in the window)."""
    if not x_labels or not series:
        return empty(title, no_data)
    vals = [v for s in series.values() for v in s if v is not None]
    ymax = y_max or nice_max(max(vals, default=1))
    left, top, w, h = 50, 20, 640, 220
    pw, ph = w - left - 140, h - top - 40
    dx = pw / max(1, len(x_labels) - 1)
    body = [f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>']
    for k in range(5):
        y = top + ph - ph * k / 4
        body.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" {FONT}>{tick_label(ymax * k / 4)}</text>')
    for j, s in enumerate(series.values()):
        pts = [(left + dx * i, top + ph - ph * v / ymax) for i, v in enumerate(s) if v is not None]
        colour = PALETTE[j % len(PALETTE)]
        if pts:
            body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="'
                        + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
            body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in pts]
    step = max(1, len(x_labels) // 6)
    for i in range(0, len(x_labels), step):
        body.append(f'<text x="{left + dx * i:.1f}" y="{h - 14}" text-anchor="middle" {FONT}>'
                    f'{escape(x_labels[i][:16])}</text>')
    body += _legend(list(series), left + pw + 10, top)
    return svg_doc(w, h, body, title)


@dataclass(frozen=True)
class Panel:
    """One band of a ``panels`` chart: its y axis (0..``y_max``, named by ``y_label`` with its unit), its
    series (name, colour, points (x, y or None: a gap)) and its reference lines (name, colour, y)."""

    y_label: str
    y_max: float
    series: list[tuple[str, str, list[tuple[float, float | None]]]] = field(default_factory=list)
    refs: list[tuple[str, str, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Marks:
    """What ``panels`` draws across every band: shaded spans (x0, x1, tooltip) under one legend entry, and
    vertical markers (name, colour, x)."""

    spans: list[tuple[float, float, str]] = field(default_factory=list)
    span_name: str = ""
    span_colour: str = "#f6c6c2"
    markers: list[tuple[str, str, float]] = field(default_factory=list)


def _runs(points: list[tuple[float, float | None]]) -> list[list[tuple[float, float]]]:
    """The points split where a value is missing, so a gap is drawn as a gap."""
    out: list[list[tuple[float, float]]] = [[]]
    for x, y in points:
        if y is None or y != y:
            out.append([])
        else:
            out[-1].append((x, y))
    return [r for r in out if r]


def _legend_rows(legend: dict[str, str], x: float, y: float, width: float) -> tuple[list[str], float]:
    """The legend in as many rows as ``width`` needs; with the height it takes."""
    out, cx, cy = [], x, y
    for name, colour in legend.items():
        w = 28 + _text_width(name)
        if cx > x and cx + w > x + width:
            cx, cy = x, cy + 16
        out.append(f'<rect x="{cx:.1f}" y="{cy}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{cx + 14:.1f}" y="{cy + 9}" {FONT}>{escape(name)}</text>')
        cx += w
    return out, cy - y + 16


def panels(title: str, bands: list[Panel], x_max: float, x_label: str, marks: Marks = Marks(),
           no_data: str = "no data", width: int = 700) -> str:
    """Bands stacked over one x axis (seconds from the origin ``x_label`` names): each band's lines, its
    reference lines dashed, the ``marks`` across all of them; a legend of exactly what is drawn. 700 px wide
    fits an A4 page's text width."""
    if not bands or not any(pts for b in bands for _, _, pts in b.series):
        return empty(title, no_data)
    legend: dict[str, str] = {}
    for b in bands:
        legend.update({name: colour for name, colour, pts in b.series if _runs(pts)})
        legend.update({name: colour for name, colour, _ in b.refs})
    if marks.spans:
        legend[marks.span_name] = marks.span_colour
    legend.update({name: colour for name, colour, _ in marks.markers})
    left, right, ph, gap = 56, 16, 110, 34
    pw = width - left - right
    head, top = _legend_rows(legend, left, 4, pw)
    top += 26
    xmax = nice_max(x_max)
    sx = lambda x: left + pw * x / xmax  # noqa: E731
    body = head
    bottom = top + len(bands) * (ph + gap) - gap
    for s0, s1, tip in marks.spans:
        body.append(f'<rect x="{sx(s0):.1f}" y="{top - 4}" width="{max(1.0, sx(s1) - sx(s0)):.1f}" '
                    f'height="{bottom - top + 4}" fill="{marks.span_colour}"><title>{escape(tip)}</title></rect>')
    for i, b in enumerate(bands):
        y0 = top + i * (ph + gap)
        sy = lambda v: y0 + ph - ph * min(v, b.y_max) / b.y_max  # noqa: E731,B023
        body.append(f'<text x="{left}" y="{y0 - 6}" {FONT}>{escape(b.y_label)}</text>')
        for k in range(5):
            y = y0 + ph - ph * k / 4
            body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#eee"/>'
                        f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" {FONT}>'
                        f'{tick_label(b.y_max * k / 4)}</text>')
        body.append(f'<line x1="{left}" y1="{y0 + ph}" x2="{left + pw}" y2="{y0 + ph}" stroke="#333"/>')
        for name, colour, value in b.refs:
            body.append(f'<line x1="{left}" y1="{sy(value):.1f}" x2="{left + pw}" y2="{sy(value):.1f}" '
                        f'stroke="{colour}" stroke-width="1.5" stroke-dasharray="6 3"><title>{escape(name)}</title>'
                        f'</line>')
        for name, colour, pts in b.series:
            for run in _runs(pts):
                body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.8" points="'
                            + " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in run)
                            + f'"><title>{escape(name)}</title></polyline>')
    for name, colour, x in marks.markers:
        body.append(f'<line x1="{sx(x):.1f}" y1="{top - 4}" x2="{sx(x):.1f}" y2="{bottom}" stroke="{colour}" '
                    f'stroke-width="2"><title>{escape(name)}</title></line>')
    for k in range(5):  # a quarter of nice_max's end is a round tick
        x = left + pw * k / 4
        body.append(f'<text x="{x:.1f}" y="{bottom + 14}" text-anchor="middle" {FONT}>{tick_label(xmax * k / 4)}'
                    f'</text>')
    body.append(f'<text x="{left + pw}" y="{bottom + 30}" text-anchor="end" {FONT}>{escape(x_label)}</text>')
    return svg_doc(width, int(bottom + 36), body, title)
