"""The one write path for facts and categories: save with dedup, update, supersede, recall.

Nothing here calls a provider inside a transaction: vectors are computed first (a save's
value for dedup and auto-categorisation, a new category's name), then the agent row and the
facts are locked, in that order, and written. When the embedder fails the fact is still
stored (exact-match dedup only) and the search layer's pipeline embeds it later: nothing
saved is lost.

Sub-modules: fact_validation, salience_update, categories, save (dedup), versions (update,
supersede, delete), review, recall, fact_erasure (a user's facts). Import from this package.
"""

from apps.facts.services.categories import category_get_or_create, category_vectors
from apps.facts.services.fact_erasure import facts_erase_user, facts_unlink_sessions
from apps.facts.services.fact_validation import clean_category, clean_key, clean_value
from apps.facts.services.recall import RecallHit, RecallResult, facts_recall
from apps.facts.services.review import (
    fact_merge,
    fact_reject,
    fact_review_approve,
    fact_review_merge,
    facts_approve,
)
from apps.facts.services.salience_update import (
    fact_reinforce,
    fact_salience,
    facts_refresh_salience,
    facts_touch,
)
from apps.facts.services.save import FactDraft, SaveResult, fact_prepare, fact_save, fact_write
from apps.facts.services.versions import fact_delete, fact_supersede, fact_update

__all__ = [
    "FactDraft",
    "RecallHit",
    "RecallResult",
    "SaveResult",
    "category_get_or_create",
    "category_vectors",
    "clean_category",
    "clean_key",
    "clean_value",
    "fact_delete",
    "fact_merge",
    "fact_prepare",
    "fact_reinforce",
    "fact_reject",
    "fact_review_approve",
    "fact_review_merge",
    "fact_salience",
    "fact_save",
    "fact_supersede",
    "fact_update",
    "fact_write",
    "facts_approve",
    "facts_erase_user",
    "facts_recall",
    "facts_refresh_salience",
    "facts_touch",
    "facts_unlink_sessions",
]
