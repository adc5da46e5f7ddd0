"""Metric-versus-k and metric-versus-loops plots of evaluation sweeps.

matplotlib is an optional dependency (``sealgraph[plot]``): it is imported only
here, only when a plot is asked for, and through its object-oriented API so that
no GUI backend is ever selected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from sealgraph.errors import InputError

__all__ = ["PLOT_METRICS", "plot_sweeps"]

PLOT_METRICS: tuple[str, ...] = ("recall", "all_gold", "precision")
"""Metrics drawn for each sweep, one panel each."""

_SWEEP_AXES = {"k": "k (evidence-set size)", "loops": "loop budget L"}


def plot_sweeps(
    sweeps: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]],
    path: str | Path | BinaryIO,
    kind: str | None = None,
) -> None:
    """Draw one row of panels per sweep (k, loops) and one panel per metric.

    Args:
        sweeps: ``report["sweeps"]``: sweep name -> value -> method -> metrics.
        path: Image file to write, or an open binary file.
        kind: Image format (``png``, ``svg``, ``pdf``...); default: the path's extension.

    Raises:
        InputError: matplotlib is not installed, or there is no sweep to draw.

    """
    try:
        from matplotlib.figure import Figure
    except ModuleNotFoundError:
        raise InputError(
            "--plot needs matplotlib, which is not installed: pip install 'sealgraph[plot]'"
        ) from None
    names = [name for name in _SWEEP_AXES if sweeps.get(name)]
    if not names:
        raise InputError("nothing to plot: the report has no sweep")
    figure = Figure(figsize=(4.2 * len(PLOT_METRICS), 3.4 * len(names)), layout="constrained")
    axes = figure.subplots(len(names), len(PLOT_METRICS), squeeze=False)
    for row, name in enumerate(names):
        grid = sweeps[name]
        values = sorted(grid, key=float)
        methods = list(dict.fromkeys(m for value in values for m in grid[value]))
        for col, metric in enumerate(PLOT_METRICS):
            ax = axes[row][col]
            for method in methods:
                points = [
                    (float(v), grid[v][method][metric])
                    for v in values
                    if grid[v].get(method, {}).get(metric) is not None  # None: does not apply
                ]
                if points:
                    ax.plot(*zip(*points, strict=True), marker="o", label=method)
            ax.set_xlabel(_SWEEP_AXES[name])
            ax.set_ylabel(metric)
            ax.set_ylim(-0.02, 1.02)
            ax.set_xticks([float(v) for v in values])
            ax.grid(alpha=0.3)
        axes[row][0].legend(fontsize="small")
    target = Path(path) if isinstance(path, str | Path) else path
    figure.savefig(target, dpi=120, format=kind)
