"""The reads of facts and categories. Modules: fact_lookup (by id, pages, versions, chains,
counts), fact_relevance (found by vector or text, relevant, salient), merge_candidates (the review
queue's merge offers). Import from this package."""

from apps.facts.selectors.fact_lookup import (
    VECTORS,
    Chain,
    fact_chain,
    fact_counts,
    fact_get,
    fact_versions,
    facts_by_category,
    facts_current,
    facts_of_user,
    facts_owned,
    facts_page,
    facts_pending,
    facts_usable,
    facts_values,
)
from apps.facts.selectors.fact_relevance import (
    categories_nearest,
    facts_found,
    facts_relevant,
    facts_salient,
)
from apps.facts.selectors.merge_candidates import (
    MergeCandidate,
    facts_merge_candidates,
    facts_merge_scope,
)

__all__ = [
    "VECTORS",
    "Chain",
    "MergeCandidate",
    "categories_nearest",
    "fact_chain",
    "fact_counts",
    "fact_get",
    "fact_versions",
    "facts_by_category",
    "facts_current",
    "facts_found",
    "facts_merge_candidates",
    "facts_merge_scope",
    "facts_of_user",
    "facts_owned",
    "facts_page",
    "facts_pending",
    "facts_relevant",
    "facts_salient",
    "facts_usable",
    "facts_values",
]
