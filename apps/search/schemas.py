from ninja import Schema


class TokenStatesOut(Schema):
    space: str  # the embedder's token space; "" when no states are kept (see error)
    stored: int  # rows with a current vector and current token states
    pending: int  # rows with a current vector, waiting for the token backfill
    error: str  # why no states are kept, when the embedder's capability fails


class CorpusBacklogOut(Schema):
    vectors: bool  # false: a keyword-only corpus (nothing to embed)
    embedded: int  # with the current model
    stale: int  # with another model: `manage.py reembed` replaces them
    pending: int  # no vector yet, no failure recorded
    failed: int  # no vector, the last attempt failed
    # Corpora that keep token states for reranking (docs/search.md, "Reranking"); else null.
    token_states: TokenStatesOut | None = None


class EmbeddingStatusOut(Schema):
    model: str
    # The messages corpus, as in the first version of this endpoint.
    embedded: int
    stale: int
    pending: int
    failed: int
    token_states: TokenStatesOut | None = None
    corpora: dict[str, CorpusBacklogOut]
