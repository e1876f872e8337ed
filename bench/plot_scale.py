"""Plot bench/search_scale.py's results: p95 against corpus size, per mode and backend.

One panel per backend, log-log; PostgreSQL shows both states (solid: after VACUUM ANALYZE,
dash-dot: right after the load), and the issue-14 targets as dashed lines. Needs matplotlib
(pip install -r requirements/bench.txt).

    .venv/bin/python bench/plot_scale.py var/search_scale.json --png docs/img/search_scale.png
"""

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

COLOURS = {
    "hybrid": "tab:blue",
    "semantic": "tab:green",
    "keyword_bm25": "tab:orange",
    "contains": "tab:purple",
}
STATES = {
    "vacuum": ("-", "after VACUUM ANALYZE"),
    "load": ("-.", "right after load"),
    "optimize": ("-", "after PRAGMA optimize"),
}
TARGETS_1M = {"hybrid": 60, "keyword_bm25": 50, "contains": 50, "semantic": 20}  # PostgreSQL
TARGETS_100K = {"vacuum": 25, "load": 40}  # PostgreSQL hybrid
PANELS = (("postgresql", "PostgreSQL + pgvector"), ("sqlite", "SQLite (embedded default)"))


def read_results(paths: list[Path]) -> list[dict]:
    """Every result of every file; a later file's figure replaces an earlier one's."""
    merged: dict[tuple, dict] = {}
    for path in paths:
        for r in json.loads(path.read_text())["results"]:
            merged[(r["backend"], r["messages"], r["mode"], r["state"])] = r
    return list(merged.values())


def draw_panel(ax, results: list[dict], backend: str, title: str) -> None:
    """One line per (mode, state) of this backend; PostgreSQL gets the targets."""
    mine = [r for r in results if r["backend"] == backend]
    for mode, colour in COLOURS.items():
        for state, (style, label) in STATES.items():
            points = sorted(
                (r["messages"], r["p95_ms"])
                for r in mine
                if r["mode"] == mode and r["state"] == state
            )
            if points:
                xs, ys = zip(*points, strict=True)
                ax.plot(xs, ys, style, color=colour, marker="o", label=f"{mode}, {label}")
    if backend == "postgresql":
        draw_targets(ax)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel("messages in the agent")
    ax.grid(True, which="both", alpha=0.3)
    if mine:
        ax.legend(fontsize=7, loc="upper left")
    else:
        ax.text(0.5, 0.5, "no results", transform=ax.transAxes, ha="center")


def draw_targets(ax) -> None:
    """The 1M targets as dashed lines (one per value), the 100k hybrid targets as stars."""
    for ms in sorted(set(TARGETS_1M.values())):
        modes = [m for m, t in TARGETS_1M.items() if t == ms]
        colour = COLOURS[modes[0]] if len(modes) == 1 else "dimgrey"
        ax.axhline(ms, color=colour, linestyle="--", linewidth=0.9, alpha=0.8)
        ax.annotate(
            f"target at 1M: {' and '.join(modes)} {ms} ms",
            (0.99, ms),
            xycoords=("axes fraction", "data"),
            ha="right",
            va="bottom",
            fontsize=7,
            color=colour,
        )
    for (state, ms), face in zip(TARGETS_100K.items(), (COLOURS["hybrid"], "white"), strict=True):
        ax.plot(
            [100_000],
            [ms],
            marker="*",
            markersize=12,
            color=COLOURS["hybrid"],
            markerfacecolor=face,
            linestyle="none",
            label=f"hybrid target at 100k, {STATES[state][1]}: {ms} ms",
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", type=Path, nargs="+", help="search_scale.py --out files")
    p.add_argument("--png", type=Path, help="default: the first results file with .png")
    args = p.parse_args()
    missing = [str(path) for path in args.results if not path.is_file()]
    if missing:
        raise SystemExit(f"no such results file: {', '.join(missing)}")
    results = read_results(args.results)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharex=True, sharey=True)
    for ax, (backend, title) in zip(axes, PANELS, strict=True):
        draw_panel(ax, results, backend, title)
    axes[0].set_ylabel("p95 per query, ms (median of the passes; query embedding included)")
    fig.suptitle(
        "bench/search_scale.py: search p95 against corpus size (one agent, k = 10, 2 cores)"
    )
    fig.tight_layout()
    png = args.png or args.results[0].with_suffix(".png")
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
