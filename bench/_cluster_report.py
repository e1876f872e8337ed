"""bench/cluster.py's report: per shape, then a table of all shapes and the scale-out ratio.

Each figure's 1-minute load average is printed beside it (sampled every 5 s during the load).
"""

import os

from bench._http import percentile
from bench.soak import Record


def ms(values: list[float], p: float) -> str:
    return f"{percentile(values, p) * 1000:.0f}" if values else "-"


def figures(r: dict) -> dict:
    """The shape's figures, derived once for its report and the summary table."""
    rec: Record = r["rec"]
    ack, present, samples = set(rec.acknowledged), r["present"], r["samples"]
    loads = [s[1] for s in samples] or [r["load_end"]]
    searches = [x for op, v in rec.seconds.items() if op.startswith("search") for x in v]
    moved = r["rows"] - r["left"]
    return {
        "appends/s": sum(rec.statuses["append"].values()) / r["elapsed"],
        "messages/s": len(rec.acknowledged) / r["elapsed"],
        "embeddings/s": r["embedded_at_stop"] / r["elapsed"],
        "pipeline/s": moved / (r["elapsed"] + r["drain"]),
        "append": rec.seconds["append"], "search": searches, "context": rec.seconds["context"],
        "backlog": r["rows"] - r["embedded_at_stop"],
        "lost": len(ack - present), "duplicated": r["rows"] - r["distinct"],
        "unacknowledged": len(present - ack),
        "server errors": sum(n for st in rec.statuses.values() for s, n in st.items() if s >= 500),
        "transport": sum(rec.transport.values()),
        "other non-2xx": {op: {s: n for s, n in st.items() if 300 <= s < 500}
                          for op, st in rec.statuses.items() if any(300 <= s < 500 for s in st)},
        "lag s": max((s[3] for s in samples), default=0.0),
        "lag bytes": max((s[4] for s in samples), default=-1.0),
        "replica missing": r["rows"] - r["replica_rows"],
        "bytes/msg": (r["size"] - r["size0"]) / max(r["rows"], 1),
        "texts/embedded": r["embedder_texts"] / max(moved, 1),
        "load mean": sum(loads) / len(loads), "load max": max(loads),
    }  # fmt: skip


def problems(r: dict, f: dict) -> list[str]:
    found = [k for k in ("lost", "duplicated", "unacknowledged", "server errors", "transport",
                         "other non-2xx") if f[k]]  # fmt: skip
    if r["server_log_errors"]:
        found.append("tracebacks in a web log")
    if f["replica missing"]:
        found.append("replica behind")
    if any(s[4] < 0 for s in r["samples"]):
        found.append("replica not streaming")
    return found


def report_shape(args, r: dict) -> None:
    f, rec = figures(r), r["rec"]
    load = f"load {f['load mean']:.1f} mean / {f['load max']:.1f} max"
    print(
        f"== ({r['n']}, {r['m']}): {r['n']} web x {args.web_workers} x {args.threads} "
        f"threads, {r['m']} workers, {r['elapsed']:.0f} s, {args.writers} writers, "
        f"{args.searchers} searchers, {args.contexts} context readers, {args.agents} agents, "
        f"embedder {args.embed_ms_per_text:g} ms per text, {os.cpu_count()} CPUs"
    )
    print(
        f"appends/s {f['appends/s']:.1f}, messages/s {f['messages/s']:.1f}, embeddings/s "
        f"{f['embeddings/s']:.1f} while loaded; through the pipeline (embedded / (load + "
        f"drain)) {f['pipeline/s']:.1f}/s  [{load}]"
    )
    for op in ("append", "search", "context"):
        print(f"  {op:8} n={len(f[op]):6d}  p50 {ms(f[op], 50):>5} ms  p95 {ms(f[op], 95):>5} ms")
    for op in sorted(o for o in rec.seconds if o.startswith("search ")):
        s = rec.seconds[op]
        print(f"  {op:16} n={len(s):6d}  p50 {ms(s, 50):>5} ms  p95 {ms(s, 95):>5} ms")
    print(
        f"embedding lag: {f['backlog']} rows pending when the writers stopped, "
        f"{r['left']} left after {r['drain']:.1f} s of draining [load {r['load_end']:.1f}]; "
        f"the embedder got {r['embedder_texts']} texts, {f['texts/embedded']:.2f} per "
        "embedded message (search and context queries count too)"
    )
    print(
        f"messages: {r['rows']} rows, acknowledged {len(rec.acknowledged)}; lost "
        f"{f['lost']}, duplicated {f['duplicated']}, unacknowledged {f['unacknowledged']}; "
        f"5xx {f['server errors']}, transport {f['transport']}, web log tracebacks "
        f"{r['server_log_errors']}; other non-2xx {f['other non-2xx'] or 'none'}; "
        f"worker log errors {r['worker_log_errors']} (retries count)"
    )
    print(
        f"replica: max replay_lag {f['lag s']:.2f} s, max {f['lag bytes'] / 1024:.0f} KiB "
        f"behind [{load}]; {r['replica_rows']} of {r['rows']} rows there "
        f"{r['replica_seconds']:.1f} s after the drain"
    )
    print(
        f"PostgreSQL: {r['size'] / 2**20:.1f} MiB, {f['bytes/msg']:.0f} bytes per message "
        f"over the migrated empty database ({r['size0'] / 2**20:.1f} MiB), "
        f"{f['bytes/msg'] * 1e6 / 2**30:.2f} GiB per 1M messages"
    )
    found = problems(r, f)
    print("FAIL: " + ", ".join(found) if found else "PASS", flush=True)


def summary(args, results: list[dict]) -> int:
    print(
        "\n| (N, M) | appends/s | msgs/s | embeds/s | pipeline/s | append p50/p95 | "
        "search p50/p95 | context p50/p95 | backlog, drain s | lost/dup/unack | "
        "replica lag s / KiB | bytes/msg | load mean/max |"
    )
    print("|---" * 13 + "|")
    failed = False
    for r in results:
        f = figures(r)
        failed |= bool(problems(r, f))
        lat = " | ".join(f"{ms(f[op], 50)} / {ms(f[op], 95)} ms" for op in ("append", "search",
                         "context"))  # fmt: skip
        print(f"| ({r['n']}, {r['m']}) | {f['appends/s']:.1f} | {f['messages/s']:.1f} | "
              f"{f['embeddings/s']:.1f} | {f['pipeline/s']:.1f} | {lat} | {f['backlog']}, "
              f"{r['drain']:.0f} | {f['lost']}/{f['duplicated']}/{f['unacknowledged']} | "
              f"{f['lag s']:.2f} / {f['lag bytes'] / 1024:.0f} | {f['bytes/msg']:.0f} | "
              f"{f['load mean']:.1f} / {f['load max']:.1f} |")  # fmt: skip
    if len(results) > 1:
        first, last = figures(results[0]), figures(results[-1])
        ratio = last["pipeline/s"] / first["pipeline/s"] if first["pipeline/s"] else float("nan")
        print(
            f"\npipeline (messages embedded / (load + drain s)), ({results[-1]['n']}, "
            f"{results[-1]['m']}) / ({results[0]['n']}, {results[0]['m']}): "
            f"{last['pipeline/s']:.1f} / {first['pipeline/s']:.1f} = {ratio:.2f}x "
            f"[load mean {last['load mean']:.1f} / {first['load mean']:.1f}]"
        )
    print("FAIL" if failed else "PASS: nothing lost, doubled or unacknowledged in any shape")
    return 1 if failed else 0
