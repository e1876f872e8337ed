from typing import Any

from django.core.management.base import BaseCommand

from apps.search.services import search_indexes_rebuild


class Command(BaseCommand):
    help = "Rebuild the SQLite search side tables (FTS5, vec0), e.g. after a VACUUM."

    def handle(
        self,
        *args: str,
        **options: Any,  # Any: BaseCommand.handle's own argument types
    ) -> None:
        rebuilt = search_indexes_rebuild()
        if not rebuilt:
            self.stdout.write("Nothing to rebuild: PostgreSQL keys its search tables by id.")
        for name in rebuilt:
            self.stdout.write(f"Rebuilt the search index of {name}.")
