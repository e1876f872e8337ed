"""LoCoMo retrieval benchmark against a running memoryhub server, through the HTTP API only.

Each conversation is ingested as one agent (keys from --keys, or agents created with
`manage.py create_agent` when --create-agents is given), one memoryhub session per LoCoMo
session, `created_at` from the session dates, `metadata.dia_id` on every turn. Every question
of categories 1-4 is asked agent-wide in each mode; hits map back to dia_ids.

    .venv/bin/python bench/locomo.py --url http://127.0.0.1:8102 --create-agents \
        --modes hybrid,keyword,semantic,contains --out var/locomo.json

--rerank off|on|both sets each agent's `rerank` setting (PATCH /agent/settings) before the
questions; "both" asks every question twice, results keyed "<mode>" and "<mode>+rerank".

--context-budgets 1000,2000,4000 also measures get_context (issue 24): every question of
categories 1-4 as the query of POST /context in its conversation's latest session, with each
budget as max_tokens (lifecycle off). Evidence recall is the fraction of the question's gold
dia_ids among the messages the context returns (the session's legs and the memory leg's
windows); with the mean tokens used and the client's p50/p95 latency. For the temporal
questions whose answer names a date: how often that date is written in the context's
messages, and in the gold messages it holds with their window's header (bench/_dates.py).
--rerank applies to it too (results keyed "context" and "context+rerank"; without --rerank,
"context" at the agents' own settings). --context-only skips the /search modes;
--context-settings '{"key": value}' PATCHes each agent's settings first.
"""

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.parse
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _dates import answer_date, shown

DATA = Path(__file__).resolve().parent.parent.parent / "shared/bench/locomo/locomo-dev.json"
KS = (1, 5, 10, 20)


class Client:
    """A keep-alive JSON client (latency is measured per request, as the client sees it)."""

    def __init__(self, url: str, key: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.key = key
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)

    def call(self, method: str, path: str, body=None) -> tuple[int, dict, float]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        for attempt in range(2):
            try:
                start = time.perf_counter()
                self.conn.request(method, "/api/v1" + path, body=data, headers=headers)
                response = self.conn.getresponse()
                raw = response.read()
                elapsed = time.perf_counter() - start
                return response.status, json.loads(raw or b"{}"), elapsed
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
                if attempt:
                    raise
        raise AssertionError("unreachable")


def parse_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_text(turn: dict) -> str:
    """The message content: the turn's text, plus the caption of an image it shared."""
    text = turn.get("text", "")
    if turn.get("blip_caption"):
        text = f"{text} [shares an image: {turn['blip_caption']}]"
    return text


def sessions_of(conv: dict) -> list[tuple[int, datetime, list[dict]]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            out.append((int(m.group(1)), parse_date(conv[f"{key}_date_time"]), turns))
    return sorted(out)


def ingest(client: Client, sample: dict) -> int:
    count = 0
    for number, start, turns in sessions_of(sample["conversation"]):
        key = f"{sample['sample_id']}-s{number}"
        status, body, _ = client.call("POST", "/sessions", {"key": key, "title": key})
        assert status in (200, 201), (status, body)
        messages = [
            {
                "role": "user",
                "name": t["speaker"],
                "content": turn_text(t),
                "created_at": (start + timedelta(seconds=i)).isoformat(),
                "metadata": {"dia_id": t["dia_id"]},
                "idempotency_key": t["dia_id"],
            }
            for i, t in enumerate(turns)
        ]
        status, body, _ = client.call("POST", f"/sessions/{key}/messages", {"messages": messages})
        assert status == 201, (status, body)
        count += len(messages)
    return count


def wait_embedded(client: Client, total: int, timeout: float = 1800) -> dict:
    """Until every turn has its vector, and its token states when the embedder keeps them."""
    deadline = time.monotonic() + timeout
    while True:
        _, status, _ = client.call("GET", "/search/status")
        tokens = status.get("token_states") or {}
        states = not tokens.get("space") or tokens["stored"] >= total
        if (status["embedded"] >= total and states) or time.monotonic() > deadline:
            return status
        time.sleep(1)


def evidence_ids(qa: dict) -> list[str]:
    out = []
    for item in qa.get("evidence", []):
        out.extend(x.strip() for x in re.split(r"[;,]", item) if x.strip())
    return [x for x in out if re.fullmatch(r"D\d+:\d+", x)]


def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


def create_agent(slug: str) -> str:
    out = subprocess.run(
        [sys.executable, "manage.py", "create_agent", slug],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    return out.stdout.strip().splitlines()[-1]


def configure(clients: list[Client], rerank: bool, candidates: int) -> None:
    """Turn each agent's reranking on or off (and set its candidate count, when given)."""
    changes: dict = {"rerank": rerank}
    if candidates:
        changes["rerank_candidates"] = candidates
    for c in clients:
        status, body, _ = c.call("PATCH", "/agent/settings", {"settings": changes})
        assert status == 200, (status, body)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def latest_session(sample: dict) -> str:
    """The key ingest() gave the conversation's last session."""
    number = max(n for n, _, _ in sessions_of(sample["conversation"]))
    return f"{sample['sample_id']}-s{number}"


def context_dia_ids(answer: dict) -> tuple[set[str], set[str]]:
    """The dia_ids a /context answer holds: in its session legs' messages, in its memory."""
    session = {m["metadata"].get("dia_id") for m in answer["messages"]}
    memory = {m["metadata"].get("dia_id") for w in answer["memory"] for m in w["messages"]}
    return session - {None}, memory - {None}


def context_budgets(text: str) -> list[int]:
    return [int(b) for b in text.split(",") if b.strip()]


def context_text(answer: dict, headers: bool = True) -> str:
    """The messages a /context answer puts in the prompt: each memory window under its
    header line (or without it), then the session's messages."""
    lines = []
    for w in answer["memory"]:
        lines += ([w["header"]] if headers else []) + [m["content"] for m in w["messages"]]
    return "\n".join(lines + [m["content"] for m in answer["messages"]])


def evidence_text(answer: dict, gold: set[str]) -> str:
    """The gold messages a /context answer holds, each with its window's header line."""
    lines = [
        f"{w['header']}\n{m['content']}"
        for w in answer["memory"]
        for m in w["messages"]
        if m["metadata"].get("dia_id") in gold
    ]
    lines += [m["content"] for m in answer["messages"] if m["metadata"].get("dia_id") in gold]
    return "\n".join(lines)


def ask_context(client: Client, session: str, qa: dict, budget: int) -> dict:
    """One get_context call: its evidence recall (and the memory leg's share), tokens, ms;
    for a temporal question whose answer names a date, whether the context writes it."""
    gold = set(evidence_ids(qa))
    body = {"session_id": session, "query": qa["question"], "max_tokens": budget,
            "lifecycle": "off"}  # fmt: skip
    status, answer, elapsed = client.call("POST", "/context", body)
    assert status == 200, (status, answer)
    session_ids, memory_ids = context_dia_ids(answer)
    row = {
        "category": qa["category"],
        "recall": len(gold & (session_ids | memory_ids)) / len(gold),
        "memory_only": len((gold & memory_ids) - session_ids) / len(gold),
        "tokens": answer["usage"]["used_tokens"],
        "ms": elapsed * 1000,
        "answer": answer,
    }
    wanted = answer_date(str(qa.get("answer", ""))) if qa["category"] == 2 else None
    if wanted is not None:
        row["date_shown"] = shown(wanted, context_text(answer))
        row["date_in_contents"] = shown(wanted, context_text(answer, headers=False))
        if gold & (session_ids | memory_ids):
            row["date_with_evidence"] = shown(wanted, evidence_text(answer, gold))
    return row


def context_recall(clients: list[Client], samples: list[dict], budgets: list[int], dump=None):
    """Evidence recall of get_context at each budget, overall and by category."""
    out = {}
    for budget in budgets:
        rows, load_before = [], os.getloadavg()[0]
        for c, sample in zip(clients, samples, strict=True):
            session = latest_session(sample)
            for qa in sample["qa"]:
                if qa.get("category") in (1, 2, 3, 4) and evidence_ids(qa):
                    rows.append(ask_context(c, session, qa, budget))
                    if dump is not None:
                        dump.append({"budget": budget, "qa": qa, "answer": rows[-1]["answer"]})
                    del rows[-1]["answer"]
        out[str(budget)] = context_metrics(rows)
        a = out[str(budget)]["all"]
        a["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        cats = " ".join(
            f"{k}={v['recall']:.3f}" for k, v in out[str(budget)].items() if k.startswith("cat")
        )
        d = out[str(budget)]["temporal_dates"]
        print(
            f"context {budget:>5} n={a['n']} recall={a['recall']:.3f} "
            f"(memory leg alone {a['memory_only']:.3f}) tokens={a['tokens']:.0f} "
            f"p50={a['p50_ms']:.1f}ms p95={a['p95_ms']:.1f}ms {cats} | temporal answers' "
            f"date written: {d['answer_date_shown']:.3f} (contents only "
            f"{d['in_contents_only']:.3f}, n={d['n']}); with the evidence "
            f"{d['with_evidence']:.3f} (n={d['n_evidence_held']}) "
            f"load {a['load'][0]:.2f}->{a['load'][1]:.2f}",
            flush=True,
        )
    return out


def context_metrics(rows: list[dict]) -> dict:
    def summary(group: list[dict]) -> dict:
        return {
            "n": len(group),
            "recall": statistics.fmean(r["recall"] for r in group),
            "memory_only": statistics.fmean(r["memory_only"] for r in group),
            "tokens": statistics.fmean(r["tokens"] for r in group),
        }

    metrics = {"all": summary(rows)}
    metrics["all"]["p50_ms"] = pct([r["ms"] for r in rows], 0.5)
    metrics["all"]["p95_ms"] = pct([r["ms"] for r in rows], 0.95)
    dated = [r for r in rows if "date_shown" in r]
    held = [r for r in dated if "date_with_evidence" in r]
    metrics["temporal_dates"] = {
        "n": len(dated),
        "answer_date_shown": statistics.fmean([r["date_shown"] for r in dated] or [0]),
        "in_contents_only": statistics.fmean([r["date_in_contents"] for r in dated] or [0]),
        "n_evidence_held": len(held),
        "with_evidence": statistics.fmean([r["date_with_evidence"] for r in held] or [0]),
    }
    for cat in sorted({r["category"] for r in rows}):
        metrics[f"cat{cat}"] = summary([r for r in rows if r["category"] == cat])
    return metrics


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--keys", default="", help="comma-separated API keys, one per conversation")
    p.add_argument("--create-agents", action="store_true", help="create agents with manage.py")
    p.add_argument("--prefix", default="locomo", help="agent slug prefix with --create-agents")
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--modes", default="hybrid,keyword,semantic,contains")
    p.add_argument("--skip-ingest", action="store_true")
    p.add_argument("--out", default="")
    p.add_argument("--rerank", choices=("", "off", "on", "both"), default="")
    p.add_argument("--rerank-candidates", type=int, default=0, help="0: the agents' setting")
    p.add_argument("--context-budgets", default="", help="e.g. 1000,2000,4000: get_context")
    p.add_argument("--context-only", action="store_true", help="no /search modes")
    p.add_argument("--context-dump", default="", help="write every /context answer here")
    p.add_argument("--context-settings", default="", help="JSON agent settings to PATCH first")
    p.add_argument("--after-ingest", default="", help="a shell command run once all is embedded")
    args = p.parse_args()

    samples = json.loads(Path(args.data).read_text())
    if args.create_agents:
        keys = [create_agent(f"{args.prefix}-{s['sample_id']}") for s in samples]
    else:
        keys = [k for k in args.keys.split(",") if k]
    assert len(keys) == len(samples), "one key per conversation"
    clients = [Client(args.url, k) for k in keys]

    if not args.skip_ingest:
        t0 = time.perf_counter()
        totals = [ingest(c, s) for c, s in zip(clients, samples, strict=True)]
        print(f"ingested {sum(totals)} turns in {time.perf_counter() - t0:.1f}s", flush=True)
        t0 = time.perf_counter()
        for c, n in zip(clients, totals, strict=True):
            print("embedding status", wait_embedded(c, n), flush=True)
        print(f"embedded in {time.perf_counter() - t0:.1f}s", flush=True)
    if args.after_ingest:  # e.g. VACUUM ANALYZE: the store as it is after its maintenance
        subprocess.run(args.after_ingest, shell=True, check=True)

    passes = {"": [None], "off": [False], "on": [True], "both": [False, True]}[args.rerank]
    contexts, dump = {}, ([] if args.context_dump else None)
    if args.context_budgets:
        if args.context_settings:
            for c in clients:
                changes = {"settings": json.loads(args.context_settings)}
                status, body, _ = c.call("PATCH", "/agent/settings", changes)
                assert status == 200, (status, body)
        for rerank in passes:
            if rerank is not None:
                configure(clients, rerank, args.rerank_candidates)
            label = {None: "context", False: "context", True: "context+rerank"}[rerank]
            print(f"{label}: load average {os.getloadavg()} before", flush=True)
            budgets = context_budgets(args.context_budgets)
            contexts[label] = context_recall(clients, samples, budgets, dump)
            print(f"{label}: load average {os.getloadavg()} after", flush=True)
        if dump is not None:
            Path(args.context_dump).write_text(json.dumps(dump))
    if args.context_only:
        if args.out:
            Path(args.out).write_text(json.dumps(contexts, indent=2))
        return

    results = {}
    for mode, rerank in [(m, r) for m in args.modes.split(",") for r in passes]:
        label = f"{mode}+rerank" if rerank else mode
        if rerank is not None:
            configure(clients, rerank, args.rerank_candidates)
        per_cat = defaultdict(lambda: defaultdict(list))
        latencies = []
        degraded = 0
        load_before = os.getloadavg()[0]
        for c, sample in zip(clients, samples, strict=True):
            for qa in sample["qa"]:
                if qa.get("category") not in (1, 2, 3, 4):
                    continue
                gold = evidence_ids(qa)
                if not gold:
                    continue
                body = {"query": qa["question"], "mode": mode, "k": max(KS)}
                status, answer, elapsed = c.call("POST", "/search", body)
                assert status == 200, (status, answer)
                latencies.append(elapsed * 1000)
                degraded += bool(answer.get("degraded"))
                ranked = [h["metadata"].get("dia_id") for h in answer["hits"]]
                row = per_cat[qa["category"]]
                for k in KS:
                    row[f"R@{k}"].append(len(set(gold) & set(ranked[:k])) / len(set(gold)))
                gold_s = {session_of(g) for g in gold}
                for k in (5, 10):
                    got = {session_of(d) for d in ranked[:k] if d}
                    row[f"S@{k}"].append(len(gold_s & got) / len(gold_s))
                rr = next((1 / (i + 1) for i, d in enumerate(ranked) if d in gold), 0.0)
                row["MRR"].append(rr)
        metrics = {}
        all_rows = defaultdict(list)
        for cat, row in sorted(per_cat.items()):
            metrics[f"cat{cat}"] = {m: statistics.fmean(v) for m, v in row.items()}
            metrics[f"cat{cat}"]["n"] = len(row["MRR"])
            for m, v in row.items():
                all_rows[m].extend(v)
        metrics["all"] = {m: statistics.fmean(v) for m, v in all_rows.items()}
        metrics["all"]["n"] = len(all_rows["MRR"])
        metrics["all"]["p50_ms"] = pct(latencies, 0.5)
        metrics["all"]["p95_ms"] = pct(latencies, 0.95)
        metrics["all"]["degraded"] = degraded  # answers saying a leg or the reranker could not run
        metrics["all"]["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        results[label] = metrics
        a = metrics["all"]
        print(
            f"{label:16s} n={a['n']} R@1={a['R@1']:.3f} R@5={a['R@5']:.3f} R@10={a['R@10']:.3f} "
            f"R@20={a['R@20']:.3f} S@5={a['S@5']:.3f} S@10={a['S@10']:.3f} MRR={a['MRR']:.3f} "
            f"p50={a['p50_ms']:.1f}ms p95={a['p95_ms']:.1f}ms degraded={degraded} "
            f"load {a['load'][0]:.2f}->{a['load'][1]:.2f}",
            flush=True,
        )
        for cat in sorted(k for k in metrics if k.startswith("cat")):
            m = metrics[cat]
            print(
                f"   {cat} n={m['n']} R@5={m['R@5']:.3f} R@10={m['R@10']:.3f} "
                f"R@20={m['R@20']:.3f} S@10={m['S@10']:.3f} MRR={m['MRR']:.3f}"
            )
    results.update(contexts)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
