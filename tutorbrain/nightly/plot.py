"""The reliability curve as a PNG, drawn on the server (matplotlib, no network)."""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")  # no display on a server; must precede pyplot

from matplotlib import pyplot as plt  # noqa: E402

FIGURE_INCHES = (4.2, 4.2)
FIGURE_DPI = 100


def reliability_png(bins: list[dict], *, title: str = "") -> bytes:
    """Mean outcome against mean prediction per non-empty bin, on the perfect diagonal."""
    figure, axes = plt.subplots(figsize=FIGURE_INCHES, dpi=FIGURE_DPI)
    try:
        axes.plot([0, 1], [0, 1], linestyle="--", color="#999999", linewidth=1, label="perfect")
        filled = [b for b in bins if b.get("count")]
        xs = [b["mean_predicted"] for b in filled]
        ys = [b["mean_outcome"] for b in filled]
        sizes = [20 + 8 * b["count"] ** 0.5 for b in filled]
        axes.plot(xs, ys, color="#1f6feb", linewidth=1.5)
        axes.scatter(xs, ys, s=sizes, color="#1f6feb", zorder=3, label="checks per bin")
        for b in filled:
            axes.annotate(
                str(b["count"]),
                (b["mean_predicted"], b["mean_outcome"]),
                textcoords="offset points",
                xytext=(5, -10),
                fontsize=7,
            )
        axes.set_xlim(0, 1)
        axes.set_ylim(0, 1)
        axes.set_xlabel("predicted mastery")
        axes.set_ylabel("observed (right 1, partial 0.5, wrong 0)")
        if title:
            axes.set_title(title, fontsize=9)
        axes.legend(loc="upper left", fontsize=7)
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        return buffer.getvalue()
    finally:
        plt.close(figure)


def reliability_data_uri(bins: list[dict], *, title: str = "") -> str:
    return "data:image/png;base64," + base64.b64encode(reliability_png(bins, title=title)).decode()
