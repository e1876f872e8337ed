"""Offline ranking experiments, step 2: every fusion and token-state variant from the cache of
bench/rank_collect.py, in numpy, in seconds. Nothing here is tuned per conversation: a free
weight is chosen by leave-one-conversation-out (for each held-out conversation, the value that
scores best on the other four), and the figure reported is over the held-out conversations.

    .venv/bin/python bench/rank_offline.py var/rank/pg.pkl --experiment final
    .venv/bin/python bench/rank_offline.py var/rank/pg.pkl --experiment spaces-final
"""

import argparse
import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rank_pieces import (
    DEPTH,
    NEIGHBOUR,
    Space,
    base,
    blend_rerank,
    blend_rerank_f,
    blend_window,
    fusion_window,
    loco,
    mean_tokens,
    pooled,
    rrf,
    rrf3_window,
    run,
    score_fusion,
    smooth,
    summary,
    use,
)

# --- experiments ----------------------------------------------------------------------------


def exp_spaces(convs):
    """Token-state compression: R@10 of today's pipeline + stored-state rerank (weight 2)."""
    baseline = run(convs, lambda c, q: smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR)[0])
    print(f"{'RRF k10 + smoothing 0.2 (no rerank)':44s} {summary(baseline)}")
    spaces = [
        Space(drop="special"),
        Space(drop="punct"),
        Space(drop="stop"),
        Space(dims=128, bits=8),
        Space(dims=96, bits=8),
        Space(dims=64, bits=8),
        Space(dims=64, bits=8, center=True),
        Space(dims=64),
        Space(dims=48, bits=8),
        Space(dims=32, bits=8),
        Space(dims=64, bits=4),
        Space(dims=64, bits=8, drop="stop"),
        Space(dims=64, bits=8, unit_first=False),
    ]
    for space in spaces:
        use(convs, space)
        res = run(
            convs,
            lambda c, q: blend_rerank(
                c, q, *smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR), DEPTH, 2.0
            ),
        )
        print(f"{space.label():44s} {summary(res)}  tokens/turn {mean_tokens(convs):.1f}")


def exp_loco_projection(convs, space):
    """The projection fitted without the held-out conversation, against fitted on all."""
    use(convs, space, loco_fit=True)
    res = run(
        convs,
        lambda c, q: blend_rerank(c, q, *smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR), DEPTH, 2.0),
    )
    print(f"{space.label() + ' fitted without the held-out':44s} {summary(res)}")


def exp_fusion(convs, space):
    use(convs, space)
    print(f"space {space.label()}")
    rrf_rank = lambda c, q: smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR)[0]  # noqa: E731
    print(f"{'RRF k10 + smoothing (no rerank)':52s} {summary(run(convs, rrf_rank))}")

    def show(name, grid, ranker_for):
        held, chosen, results = loco(convs, grid, ranker_for)
        curve = " ".join(f"{v}:{pooled(results[v]):.3f}" for v in grid)
        print(f"{name:52s} LOCO {summary(held)}")
        print(f"{'':52s} chosen {sorted(set(chosen.values()))} {dict(chosen)}")
        print(f"{'':52s} all-dev R@10 by value: {curve}")

    weights = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0]
    show(
        "RRF + smoothing, then z-blend with MaxSim (top 50)",
        weights,
        lambda w: (
            lambda c, q: blend_rerank(c, q, *smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR), DEPTH, w)
        ),
    )
    show(
        "  ... and +0.3 z(best neighbour MaxSim)",
        weights,
        lambda w: (
            lambda c, q: blend_rerank(
                c, q, *smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR), DEPTH, w, nb=0.3
            )
        ),
    )
    show(
        "  ... over the whole union (depth 200)",
        weights,
        lambda w: (
            lambda c, q: blend_rerank(c, q, *smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR), 200, w)
        ),
    )
    alphas = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    for norm in ("minmax", "z"):
        for dense in ("maxsim", "cos", "both"):
            show(
                f"score fusion {norm}: w BM25 + (1-w) {dense}, smoothing",
                alphas,
                lambda w, norm=norm, dense=dense: (
                    lambda c, q: score_fusion(c, q, w, norm=norm, dense=dense)
                ),
            )
    show(
        "score fusion minmax maxsim, no smoothing",
        alphas,
        lambda w: lambda c, q: score_fusion(c, q, w, smooth_w=0.0),
    )
    show(
        "score fusion minmax maxsim + 0.3 N(best neighbour)",
        alphas,
        lambda w: lambda c, q: score_fusion(c, q, w, nb=0.3),
    )


def exp_final(convs, space):
    """The fusion table in docs/search.md: every row leave-one-conversation-out."""
    use(convs, space)
    print(f"space {space.label()}, tokens per turn {mean_tokens(convs):.1f}")
    rrf_rank = lambda c, q: smooth(c, *rrf([q["b"], q["v"]]), NEIGHBOUR)[0]  # noqa: E731
    print(f"{'RRF k10 + smoothing 0.2 (rerank off)':58s}      {summary(run(convs, rrf_rank))}")
    weights = [1.0, 1.5, 2.0, 2.5, 3.0]
    alphas = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5]
    rows = [
        ("z-blend, own tokens, 50 candidates (issue 14's stage)", weights,
         lambda w: blend_rerank_f(w, 50)),
        ("z-blend, window 0.8, 50 candidates", weights, lambda w: blend_window(0.8, w, 50)),
        ("z-blend, window 0.8, 100 candidates (shipped)", weights,
         lambda w: blend_window(0.8, w, 100)),
        ("z-blend, window 0.8, 200 candidates", weights, lambda w: blend_window(0.8, w, 200)),
        ("z-blend, 100 candidates, window discount by LOCO too",
         [(g, w) for g in (0.7, 0.8, 0.9, 1.0) for w in weights],
         lambda gw: blend_window(gw[0], gw[1], 100)),
        ("score fusion a BM25 + (1-a) window MaxSim, smoothing", alphas,
         lambda a: fusion_window(0.8, a)),
        ("score fusion, no smoothing", alphas, lambda a: fusion_window(0.8, a, 0.0)),
        ("score fusion a BM25 + (1-a) (window MaxSim + cosine)", alphas,
         lambda a: fusion_window(0.8, a, dense_cos=True)),
        ("RRF of BM25, vector and window MaxSim ranks (no weight)", [0],
         lambda _w: rrf3_window(0.8)),
    ]  # fmt: skip
    for name, grid, ranker_for in rows:
        held, chosen, results = loco(convs, grid, ranker_for)
        curve = " ".join(f"{v}:{pooled(results[v]):.3f}" for v in grid if not isinstance(v, tuple))
        print(f"{name:58s} LOCO {summary(held)}")
        print(f"{'':58s} chosen per fold {list(chosen.values())}; all-dev R@10 {curve}")


def exp_spaces_final(convs):
    """Token-state compression under the shipped stage (window 0.8, weight 2, 100)."""
    spaces = [
        Space(drop="stop"),
        Space(dims=128, bits=8, center=True, drop="stop"),
        Space(dims=64, bits=8, center=True, drop="stop"),
        Space(dims=48, bits=8, center=True, drop="stop"),
        Space(dims=32, bits=8, center=True, drop="stop"),
        Space(dims=64, bits=4, center=True, drop="stop"),
        Space(dims=64, bits=8, center=True, drop="punct"),
        Space(dims=64, bits=8, center=True, drop="special"),
    ]
    for space in spaces:
        use(convs, space)
        for c in convs:
            c.pop("window0.8", None)
        res = run(convs, blend_window(0.8, 2.0, 100))
        print(f"{space.label():32s} tokens/turn {mean_tokens(convs):5.1f}  {summary(res)}")
    use(convs, Space(dims=64, bits=8, center=True, drop="stop"), loco_fit=True)
    for c in convs:
        c.pop("window0.8", None)
    res = run(convs, blend_window(0.8, 2.0, 100))
    name = "pca64c fitted without the held-out"
    print(f"{name:32s} tokens/turn {mean_tokens(convs):5.1f}  {summary(res)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cache", type=Path)
    p.add_argument(
        "--experiment",
        default="final",
        help="final (the fusion table) | spaces-final (the compression table) | "
        "spaces | loco-projection | fusion (first exploration, own tokens only) | all",
    )
    p.add_argument("--dims", type=int, default=64)
    p.add_argument("--bits", type=int, default=8)
    p.add_argument("--drop", default="stop")
    p.add_argument("--center", action=argparse.BooleanOptionalAction, default=True)
    args = p.parse_args()
    data = pickle.loads(args.cache.read_bytes())
    convs = data["convs"]
    base(convs)
    print(f"{data['backend']}: {sum(len(c['questions']) for c in convs)} questions")
    space = Space(dims=args.dims, bits=args.bits, drop=args.drop, center=args.center)
    if args.experiment in ("spaces", "all"):
        exp_spaces(convs)
    if args.experiment in ("loco-projection", "all"):
        exp_loco_projection(convs, space)
    if args.experiment in ("fusion", "all"):
        exp_fusion(convs, space)
    if args.experiment in ("final", "all"):
        exp_final(convs, space)
    if args.experiment in ("spaces-final", "all"):
        exp_spaces_final(convs)


if __name__ == "__main__":
    main()
