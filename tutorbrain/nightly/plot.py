"""The reliability curve as a PNG, drawn on the server (matplotlib, no network).

Each non-empty bin is one point (mean prediction, mean outcome) with its 95 % Wilson
interval and its number of checks: bins are separate groups of checks, so no line joins
them as if the curve were smooth, and ten checks show how little ten checks say. The axes
run a little past 0 and 1 so points on the edges are drawn whole.
"""

from __future__ import annotations

import base64
import io
import math

import matplotlib

matplotlib.use("Agg")  # no display on a server; must precede pyplot

from matplotlib import pyplot as plt  # noqa: E402

FIGURE_INCHES = (4.6, 4.6)
FIGURE_DPI = 100
# 95 % two-sided normal quantile.
WILSON_Z = 1.959964
AXIS_PAD = 0.06


def wilson_interval(mean: float, count: int, z: float = WILSON_Z) -> tuple[float, float]:
    """The Wilson score interval of a proportion `mean` observed over `count` trials.

    Outcomes are 1 (right), 0.5 (partial) and 0 (wrong); their mean is treated as the
    proportion, which is exact without partials and a fair guide with them.
    """
    if count <= 0:
        return 0.0, 1.0
    p = min(max(mean, 0.0), 1.0)
    denominator = 1 + z * z / count
    centre = (p + z * z / (2 * count)) / denominator
    half = z * math.sqrt(p * (1 - p) / count + z * z / (4 * count * count)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def reliability_points(bins: list[dict]) -> list[dict]:
    """The drawn points: one per non-empty bin, with its interval."""
    points = []
    for b in bins:
        if not b.get("count") or b.get("mean_predicted") is None:
            continue
        low, high = wilson_interval(b["mean_outcome"], b["count"])
        points.append(
            {
                "x": b["mean_predicted"],
                "y": b["mean_outcome"],
                "count": b["count"],
                "low": low,
                "high": high,
                "lower": b.get("lower"),
                "upper": b.get("upper"),
            }
        )
    return points


def reliability_png(bins: list[dict], *, title: str = "") -> bytes:
    """Mean outcome against mean prediction per non-empty bin, on the perfect diagonal."""
    figure, axes = plt.subplots(figsize=FIGURE_INCHES, dpi=FIGURE_DPI)
    try:
        axes.plot([0, 1], [0, 1], linestyle="--", color="#999999", linewidth=1, label="perfect")
        points = reliability_points(bins)
        if points:
            axes.errorbar(
                [p["x"] for p in points],
                [p["y"] for p in points],
                yerr=[
                    [p["y"] - p["low"] for p in points],
                    [p["high"] - p["y"] for p in points],
                ],
                fmt="o",
                color="#1f6feb",
                ecolor="#1f6feb",
                elinewidth=1,
                capsize=3,
                markersize=6,
                clip_on=False,
                zorder=3,
                label="bin: mean and 95% interval",
            )
        for p in points:
            # The count sits beside the point, on the side away from the nearer edge, so
            # it never lands on a tick label or the whisker.
            right = p["x"] < 0.8
            axes.annotate(
                f"n={p['count']}",
                (p["x"], p["y"]),
                textcoords="offset points",
                xytext=(7 if right else -7, 0),
                ha="left" if right else "right",
                va="center",
                fontsize=7,
                color="#333333",
            )
        axes.set_xlim(-AXIS_PAD, 1 + AXIS_PAD)
        axes.set_ylim(-AXIS_PAD, 1 + AXIS_PAD)
        axes.set_xticks([0, 0.25, 0.5, 0.75, 1])
        axes.set_yticks([0, 0.25, 0.5, 0.75, 1])
        axes.set_xlabel("predicted mastery (mean of the bin)")
        axes.set_ylabel("observed (right 1, partial 0.5, wrong 0)")
        if title:
            axes.set_title(title, fontsize=9)
        axes.legend(loc="upper left", fontsize=7, frameon=False)
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        return buffer.getvalue()
    finally:
        plt.close(figure)


def reliability_data_uri(bins: list[dict], *, title: str = "") -> str:
    return "data:image/png;base64," + base64.b64encode(reliability_png(bins, title=title)).decode()
