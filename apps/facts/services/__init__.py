"""The one write path for facts and categories: save with dedup, update, supersede, recall.

Embeddings are computed synchronously here, because dedup and auto-categorisation need them
at write time. When the embedder fails the fact is still stored (exact-match dedup only),
its error is kept and `facts.embed_fact` embeds it later: nothing saved is lost.

Sub-modules: validation, embedding (late embedding too), salience, categories, save (dedup),
versions (update, supersede, delete), recall. Import from this package.
"""

from apps.facts.services.categories import category_get_or_create
from apps.facts.services.embedding import Embedding, embed, embed_retry_delay, fact_embed
from apps.facts.services.recall import RecallHit, RecallResult, facts_recall
from apps.facts.services.salience import fact_salience, facts_refresh_salience, facts_touch
from apps.facts.services.save import SaveResult, fact_save
from apps.facts.services.validation import clean_category, clean_key, clean_value
from apps.facts.services.versions import fact_delete, fact_supersede, fact_update

__all__ = [
    "Embedding",
    "RecallHit",
    "RecallResult",
    "SaveResult",
    "category_get_or_create",
    "clean_category",
    "clean_key",
    "clean_value",
    "embed",
    "embed_retry_delay",
    "fact_delete",
    "fact_embed",
    "fact_salience",
    "fact_save",
    "fact_supersede",
    "fact_update",
    "facts_recall",
    "facts_refresh_salience",
    "facts_touch",
]
