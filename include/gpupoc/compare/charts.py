"""The comparison's charts, inline SVG with units on both axes: each candidate's congestion wait CDF, and
GPUs held over the wave (from the congestion snapshots)."""

from __future__ import annotations

from html import escape

from gpupoc.report.charts import FONT, PALETTE, empty, nice_max, svg_doc, tick_label

W, H, LEFT, TOP, RIGHT, BOTTOM = 680, 280, 56, 20, 150, 44


def _axes(title_x: str, title_y: str, xmax: float, ymax: float, y_fmt=tick_label) -> list[str]:
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    body = [f'<line x1="{LEFT}" y1="{TOP + ph}" x2="{LEFT + pw}" y2="{TOP + ph}" stroke="#333"/>',
            f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + ph}" stroke="#333"/>']
    for k in range(5):
        y, x = TOP + ph - ph * k / 4, LEFT + pw * k / 4
        body.append(f'<text x="{LEFT - 4}" y="{y + 4:.1f}" text-anchor="end" {FONT}>{y_fmt(ymax * k / 4)}</text>')
        body.append(f'<text x="{x:.1f}" y="{TOP + ph + 14}" text-anchor="middle" {FONT}>'
                    f'{tick_label(xmax * k / 4)}</text>')
    body.append(f'<text x="{LEFT + pw / 2:.1f}" y="{H - 6}" text-anchor="middle" {FONT}>{escape(title_x)}</text>')
    body.append(f'<text x="12" y="{TOP + ph / 2:.1f}" text-anchor="middle" transform="rotate(-90 12 '
                f'{TOP + ph / 2:.1f})" {FONT}>{escape(title_y)}</text>')
    return body


def _legend(names: list[str]) -> list[str]:
    x = W - RIGHT + 12
    out = []
    for j, name in enumerate(names):
        y = TOP + 6 + 16 * j
        out.append(f'<rect x="{x}" y="{y - 8}" width="10" height="10" fill="{PALETTE[j % len(PALETTE)]}"/>')
        out.append(f'<text x="{x + 14}" y="{y + 1}" {FONT}>{escape(name[:18])}</text>')
    return out


def _steps(points: list[tuple[float, float]], xmax: float, ymax: float, colour: str) -> str:
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    xy = [(LEFT + pw * x / xmax, TOP + ph - ph * y / ymax) for x, y in points]
    return (f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="'
            + " ".join(f"{x:.1f},{y:.1f}" for x, y in xy) + '"/>')


def wait_cdf(series: dict[str, list[float]]) -> str:
    """Share of the congestion wave's workloads that waited at most x seconds, one step line per candidate."""
    title = "Queue wait CDF (queue congestion wave)"
    if not any(series.values()):
        return empty(title, "not measured: no candidate recorded congestion waits")
    xmax = nice_max(max(v for s in series.values() for v in s))
    body = _axes("wait (seconds)", "workloads started (%)", xmax, 100.0)
    for j, (name, waits) in enumerate(series.items()):
        if not waits:
            continue
        n, pts = len(waits), [(0.0, 0.0)]
        for i, w in enumerate(waits, 1):
            pts += [(w, pts[-1][1]), (w, 100.0 * i / n)]
        pts.append((xmax, 100.0))
        body.append(_steps(pts, xmax, 100.0, PALETTE[j % len(PALETTE)]))
    return svg_doc(W, H, body + _legend(list(series)), title)


def occupancy(series: dict[str, list[tuple[float, float]]]) -> str:
    """GPUs held by running workloads over the wave (seconds since its first snapshot), per candidate."""
    title = "GPUs held over the congestion wave"
    if not any(series.values()):
        return empty(title, "not measured: no candidate recorded queue snapshots")
    xmax = nice_max(max(x for s in series.values() for x, _ in s) or 1.0)
    ymax = nice_max(max(y for s in series.values() for _, y in s) or 1.0)
    body = _axes("time since the wave's first snapshot (seconds)", "GPUs held by running workloads", xmax, ymax)
    for j, pts in enumerate(series.values()):
        if pts:
            body.append(_steps(pts, xmax, ymax, PALETTE[j % len(PALETTE)]))
    return svg_doc(W, H, body + _legend(list(series)), title)
