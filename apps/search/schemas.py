from ninja import Schema


class CorpusBacklogOut(Schema):
    vectors: bool  # false: a keyword-only corpus (nothing to embed)
    embedded: int  # with the current model
    stale: int  # with another model: `manage.py reembed` replaces them
    pending: int  # no vector yet, no failure recorded
    failed: int  # no vector, the last attempt failed


class EmbeddingStatusOut(Schema):
    model: str
    # The messages corpus, as in the first version of this endpoint.
    embedded: int
    stale: int
    pending: int
    failed: int
    corpora: dict[str, CorpusBacklogOut]
