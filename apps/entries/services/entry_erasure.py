"""Erasing one end user's entries (issue 26), with their aliases and changes."""

from collections import Counter
from collections.abc import Sequence

from django.db import transaction
from django.db.models import Q

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.entries.models import Entry, EntryAlias, EntryChange


@transaction.atomic
def entries_erase_user(*, agent: Agent, user: str, also: Sequence[int] = ()) -> dict[str, int]:
    """Delete every entry of one end user of the agent (their MEMORY.md and USER.md too), the
    entries `also` names (their sessions' archives), and the aliases and changes of all of
    them; unlike Remove, the change log keeps nothing. The rows deleted per model label. The
    caller holds the agent's lock."""
    if user == AGENT:
        raise ValueError("the agent's own entries are not a user's")
    entries = Entry.objects.filter(agent=agent).filter(Q(user=user) | Q(pk__in=list(also)))
    owned = Q(user=user) | Q(entry__in=entries)
    deleted: Counter[str] = Counter()
    # Changes first: deleting an entry would leave them behind without it (SET_NULL).
    deleted.update(EntryChange.objects.filter(agent=agent).filter(owned).delete()[1])
    deleted.update(EntryAlias.objects.filter(agent=agent).filter(owned).delete()[1])
    deleted.update(entries.delete()[1])
    return dict(deleted)
