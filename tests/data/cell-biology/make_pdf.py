"""Build energy-in-the-cell.pdf from energy-in-the-cell.txt (one page per form feed).

Run from the repository root: `python tests/data/cell-biology/make_pdf.py`. Uses only
matplotlib (ships offline); fonts are embedded as TrueType so the text layer is
extractable. The PDF is committed; this script documents how it was made.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "energy-in-the-cell.txt"
TARGET = HERE / "energy-in-the-cell.pdf"
LINE_HEIGHT = 0.028


def main() -> None:
    matplotlib.rcParams["pdf.fonttype"] = 42
    pages = SOURCE.read_text(encoding="utf-8").split("\f")
    with PdfPages(TARGET, metadata={"Title": "Energy in the cell", "Author": "tutor brain"}) as pdf:
        for page in pages:
            figure = plt.figure(figsize=(8.27, 11.69))  # A4
            y = 0.95
            for line in page.strip("\n").splitlines():
                if line.strip():
                    figure.text(0.08, y, line, fontsize=10, family="DejaVu Sans")
                y -= LINE_HEIGHT
            pdf.savefig(figure)
            plt.close(figure)


if __name__ == "__main__":
    main()
