"""Re-embed messages whose vector is missing or was made by another model."""

from django.core.management.base import BaseCommand, CommandError

from apps.agents.models import Agent
from apps.conversations import embedding
from apps.conversations.tasks import embed_messages_task
from apps.providers.embeddings import get_embedder


class Command(BaseCommand):
    help = (
        "Re-embed every message lacking a vector of the configured embedding model "
        "(run after changing the model). --all re-embeds everything."
    )

    def add_arguments(self, parser):
        parser.add_argument("--agent", help="only this agent (slug)")
        parser.add_argument("--all", action="store_true", help="also messages already current")
        parser.add_argument(
            "--enqueue", action="store_true", help="send batches to the Celery worker instead"
        )

    def handle(self, *args, agent=None, all=False, enqueue=False, **options):
        agent_id = None
        if agent:
            found = Agent.objects.filter(slug=agent).first()
            if found is None:
                raise CommandError(f"no agent {agent!r}")
            agent_id = found.id
        label = embedding.vector_label(get_embedder())
        if all:
            from apps.conversations.models import Message

            qs = Message.objects.all()
            if agent_id is not None:
                qs = qs.filter(agent_id=agent_id)
            ids = list(qs.order_by("created_at", "id").values_list("pk", flat=True))
        else:
            ids = embedding.messages_stale_ids(label=label, agent_id=agent_id)
        size = embedding.batch_size()
        done = failed = 0
        for start in range(0, len(ids), size):
            chunk = ids[start : start + size]
            if enqueue:
                embed_messages_task.delay([str(i) for i in chunk])
                continue
            result = embedding.messages_embed(message_ids=chunk, force=all)
            done += result.embedded
            failed += result.failed
            if result.error:
                self.stderr.write(f"batch at {start}: {result.error}")
        if enqueue:
            self.stdout.write(f"enqueued {len(ids)} messages for {label}")
        else:
            self.stdout.write(f"re-embedded {done} messages with {label}, {failed} failed")
        if failed:
            raise CommandError(f"{failed} messages could not be embedded")
