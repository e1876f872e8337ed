"""/healthz entry for the search layer: the embedding backlog of every corpus."""

from apps.search.selectors import backlogs


def embedding_backlog_report() -> tuple[str, dict, bool]:
    """Pending and failed rows per embedding corpus, over all agents; informative only (a
    backlog is work to do, not an outage)."""
    body = {b.corpus: {"pending": b.pending, "failed": b.failed} for b in backlogs()}
    return "embedding_backlog", body, True
