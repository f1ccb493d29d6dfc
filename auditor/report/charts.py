"""Small SVG charts for the report, written as text: no plotting library, no network.

Each function returns one self-contained ``<svg>`` element (inline in the HTML,
drawn by weasyprint in the PDF). Sizes are CSS pixels (0.75 pt); the text uses
the report's font, so what the chart says is searchable in the PDF.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 640
FONT = "DejaVu Sans, sans-serif"
COLORS = {"error": "#9b1c1c", "warning": "#b7791f", "total": "#2c5282"}
AXIS = "#555"
GRID = "#ddd"


@dataclass(frozen=True)
class Bar:
    """One bar: a label and its value split into stacked parts (series name -> value)."""

    label: str
    parts: dict[str, int]
    note: str = ""  # drawn after the bar's total, e.g. a rule's title

    @property
    def total(self) -> int:
        return sum(self.parts.values())


def _step(value: int) -> int:
    """The tick step: 1, 2 or 5 times a power of ten, about a fifth of `value`."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if value <= m * step * 5:
                return m * step
        step *= 10


def _nice_max(value: int) -> int:
    """The axis end: `value` rounded up to a whole tick step."""
    step = _step(max(value, 1))
    return max(-(-value // step) * step, 1)


def _ticks(top: int) -> list[int]:
    return list(range(0, top + 1, _step(top)))


def _text(
    x: float,
    y: float,
    s: str,
    *,
    size: float = 10,
    anchor: str = "start",
    fill: str = "#111",
    weight: str = "normal",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-family="{FONT}" font-weight="{weight}" fill="{fill}">{escape(s)}</text>'
    )


def _legend(series: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for name in series:
        out.append(
            f'<rect x="{x:.1f}" y="{y - 8:.1f}" width="9" height="9" '
            f'fill="{COLORS.get(name, COLORS["total"])}"/>'
        )
        out.append(_text(x + 13, y, name, size=9))
        x += 18 + 7 * len(name) + 14
    return out


def _counts(bar: Bar, series: Sequence[str]) -> str:
    """ "12 (10 errors, 2 warnings)": a bar's total, and its parts when there are two."""
    total = f"{bar.total:,}"
    parts = [(name, bar.parts.get(name, 0)) for name in series if bar.parts.get(name, 0)]
    if len(series) < 2 or not parts:
        return total
    words = ", ".join(f"{n:,} {name}{'s' if n != 1 else ''}" for name, n in parts)
    return f"{total} ({words})"


def text_alternative(label: str, bars: Sequence[Bar], series: Sequence[str]) -> str:
    """What the chart shows, in words and every number: read out for a reader who
    cannot see it (the PDF's /Alt of the figure, the HTML's aria-label)."""
    if not bars:
        return f"{label}: no data."
    items = "; ".join(f"{bar.label}: {_counts(bar, series)}" for bar in bars)
    total = sum(bar.total for bar in bars)
    return f"{label}, {len(bars):,} bars, {total:,} in all. {items}."


def _svg(height: float, body: list[str], label: str, alt: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" role="img" aria-label="{escape(alt)}">'
        f"<title>{escape(alt)}</title>" + "".join(body) + "</svg>"
    )


def horizontal_bars(
    bars: Sequence[Bar],
    series: Sequence[str],
    label: str,
    label_width: int = 90,
    note_width: int = 0,
    top: int | None = None,
) -> str:
    """Bars left to right, one row per item, stacked by `series`, the total at the end."""
    row, top_pad, bottom_pad = (16 if len(bars) <= 30 else 13), 22, 26
    height = top_pad + row * max(len(bars), 1) + bottom_pad
    x0 = label_width
    plot = WIDTH - x0 - note_width - 40
    top = top or _nice_max(max((b.total for b in bars), default=0))
    body = _legend(series, x0, 12)
    for t in _ticks(top):
        x = x0 + plot * t / top
        body.append(
            f'<line x1="{x:.1f}" y1="{top_pad - 4}" x2="{x:.1f}" '
            f'y2="{height - bottom_pad}" stroke="{GRID}" stroke-width="0.7"/>'
        )
        body.append(
            _text(x, height - bottom_pad + 12, f"{t:,}", size=8, anchor="middle", fill=AXIS)
        )
    for i, bar in enumerate(bars):
        y = top_pad + i * row
        body.append(_text(x0 - 6, y + 11, bar.label, size=9, anchor="end"))
        x = x0
        for name in series:
            value = bar.parts.get(name, 0)
            if value <= 0:
                continue
            w = plot * value / top
            body.append(
                f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row - 6}" '
                f'fill="{COLORS.get(name, COLORS["total"])}"/>'
            )
            x += w
        body.append(_text(x + 4, y + 11, f"{bar.total:,}", size=8.5, weight="bold"))
        if bar.note:
            body.append(_text(x0 + plot + 34, y + 11, bar.note, size=8, fill=AXIS))
    body.append(
        f'<line x1="{x0}" y1="{top_pad - 4}" x2="{x0}" y2="{height - bottom_pad}" '
        f'stroke="{AXIS}" stroke-width="1"/>'
    )
    return _svg(height, body, label, text_alternative(label, bars, series))


def bar_charts(
    bars: Sequence[Bar], series: Sequence[str], label: str, per_chart: int = 55, **options: int
) -> list[str]:
    """`horizontal_bars` in charts of at most `per_chart` bars (each fits a page), on one
    scale."""
    top = _nice_max(max((b.total for b in bars), default=0))
    chunks = [bars[i : i + per_chart] for i in range(0, max(len(bars), 1), per_chart)]
    return [horizontal_bars(chunk, series, label, top=top, **options) for chunk in chunks]


def columns(bars: Sequence[Bar], series: Sequence[str], label: str, axis_label: str) -> str:
    """Vertical bars in time order, stacked by `series`; labels thinned to fit."""
    height, top_pad, bottom_pad, left = 230, 24, 46, 40
    plot_h = height - top_pad - bottom_pad
    plot_w = WIDTH - left - 10
    n = max(len(bars), 1)
    slot = plot_w / n
    top = _nice_max(max((b.total for b in bars), default=0))
    body = _legend(series, left, 12)
    for t in _ticks(top):
        y = top_pad + plot_h - plot_h * t / top
        body.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{WIDTH - 10}" y2="{y:.1f}" '
            f'stroke="{GRID}" stroke-width="0.7"/>'
        )
        body.append(_text(left - 5, y + 3, f"{t:,}", size=8, anchor="end", fill=AXIS))
    every = max(1, -(-n * 42 // plot_w))  # one label per ~42 px
    for i, bar in enumerate(bars):
        x = left + i * slot
        y = top_pad + plot_h
        w = max(slot * 0.8, 1)
        for name in series:
            value = bar.parts.get(name, 0)
            if value <= 0:
                continue
            h = plot_h * value / top
            y -= h
            body.append(
                f'<rect x="{x + slot * 0.1:.1f}" y="{y:.1f}" width="{w:.1f}" '
                f'height="{h:.1f}" fill="{COLORS.get(name, COLORS["total"])}"/>'
            )
        if bar.total and slot >= 14:
            body.append(_text(x + slot / 2, y - 3, f"{bar.total:,}", size=7.5, anchor="middle"))
        if i % every == 0:
            body.append(
                _text(
                    x + slot / 2,
                    top_pad + plot_h + 12,
                    bar.label,
                    size=7.5,
                    anchor="middle",
                    fill=AXIS,
                )
            )
    body.append(
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{WIDTH - 10}" '
        f'y2="{top_pad + plot_h}" stroke="{AXIS}" stroke-width="1"/>'
    )
    body.append(
        _text(left + plot_w / 2, height - 8, axis_label, size=8.5, anchor="middle", fill=AXIS)
    )
    return _svg(
        height, body, label, text_alternative(f"{label}; x axis: {axis_label}", bars, series)
    )
