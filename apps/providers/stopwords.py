"""English query words that carry no topic. The BM25 leg drops them from OR queries
(apps/search/query.py) and the reranker from its query words
(apps/providers/embeddings/token_embedder.py): one list, so the two stages agree on what a question
is about."""

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing don down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself no nor not now of off on once only or other
    our ours ourselves out over own same she should so some such t than that the their theirs
    them themselves then there these they this those through to too under until up very was
    we were what when where which while who whom why will with would you your yours yourself
    yourselves s ll re ve d m near""".split()
)
