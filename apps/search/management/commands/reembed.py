"""Re-embed rows whose vector is missing or was made by another model, in every corpus."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.agents.models import Agent
from apps.providers.embeddings import vector_label
from apps.search import embedding
from apps.search.corpora import embedding_corpora
from apps.search.embedding_queue import enqueue_embedding
from apps.search.selectors import stale_ids
from apps.search.services import corpus_embed


class Command(BaseCommand):
    help = (
        "Re-embed every row lacking a vector of the configured embedding model (run after "
        "changing the model, or to re-drive rows past the maximum attempts). --all "
        "re-embeds everything; --corpus limits it to one corpus."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        names = [c.name for c in embedding_corpora()]
        parser.add_argument("--corpus", choices=names, help="only this corpus")
        parser.add_argument("--agent", help="only this agent (slug)")
        parser.add_argument("--all", action="store_true", help="also rows already current")
        parser.add_argument(
            "--enqueue", action="store_true", help="send batches to the Celery worker instead"
        )

    def handle(
        self,
        *args: str,
        corpus: str | None = None,
        agent: str | None = None,
        all: bool = False,
        enqueue: bool = False,
        **options: Any,  # Any: BaseCommand.handle's own argument types
    ) -> None:
        agent_id = None
        if agent:
            found = Agent.objects.filter(slug=agent).first()
            if found is None:
                raise CommandError(f"no agent {agent!r}")
            agent_id = found.id
        label = vector_label()
        failed = 0
        for c in embedding_corpora():
            if corpus is None or c.name == corpus:
                failed += self._corpus(c.name, label, agent_id, force=all, enqueue=enqueue)
        if failed:
            raise CommandError(f"{failed} rows could not be embedded")

    def _corpus(
        self, name: str, label: str, agent_id: int | None, *, force: bool, enqueue: bool
    ) -> int:
        ids = stale_ids(corpus=name, label=label, agent_id=agent_id, include_current=force)
        if enqueue:
            enqueue_embedding(corpus=name, ids=ids)
            self.stdout.write(f"enqueued {len(ids)} {name} for {label}")
            return 0
        size = embedding.batch_size()
        done = failed = 0
        for start in range(0, len(ids), size):
            result = corpus_embed(corpus=name, ids=ids[start : start + size], force=force)
            done += result.embedded
            failed += result.failed
            if result.error:
                self.stderr.write(f"{name} batch at {start}: {result.error}")
        self.stdout.write(f"re-embedded {done} {name} with {label}, {failed} failed")
        return failed
