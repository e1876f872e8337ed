"""The abstract model of a corpus's token states (`corpora.TokenStore`); each corpus that
keeps them subclasses it with its one-to-one `owner` key (docs/search.md, "Reranking")."""

from django.db import models


class TokenStates(models.Model):
    """One row's token states, kept when it is embedded, for reranking without a model run:
    one int8 row of the embedder's token space per kept token. Subclasses add the owner key
    (OneToOneField, primary key, on_delete=CASCADE, related_name="token_states")."""

    # The embedder's token space ("model/projection@int8"): states of another are stale.
    space = models.CharField(max_length=100)
    count = models.PositiveSmallIntegerField()  # tokens (rows of codes)
    codes = models.BinaryField()  # count x dims int8, row-major

    class Meta:
        abstract = True
