"""Expiring named leases: a lock that may be held across an LLM call.

No transaction may stay open during an LLM call (apps/providers/guard.py), so the lifecycle
cannot keep a row lock while it waits for the model. A lease is a row with a holder token
and an expiry, taken and released by single conditional UPDATEs (healthchecks' pattern); a
holder that dies leaves it to expire after its TTL.
"""

import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from apps.lifecycle.models import Lease


@dataclass(frozen=True)
class Held:
    name: str
    token: str


def lease_ttl(seconds: float) -> float:
    """A lease outlives the work it covers by MEMORYHUB_LIFECYCLE_LEASE_MARGIN_SECONDS."""
    return seconds + float(settings.MEMORYHUB_LIFECYCLE_LEASE_MARGIN_SECONDS)


def lease_acquire(*, name: str, ttl: float) -> Held | None:
    """Take the lease for `ttl` seconds if it is free or expired; None if someone holds it."""
    now = timezone.now()
    token = secrets.token_hex(16)
    until = now + timedelta(seconds=ttl)
    # An expired lease (its holder died) is taken over in one conditional UPDATE.
    stale = Q(until__lt=now) | Q(until__isnull=True)
    if Lease.objects.filter(stale, name=name).update(token=token, until=until) == 1:
        return Held(name=name, token=token)
    try:
        with transaction.atomic():
            Lease.objects.create(name=name, token=token, until=until)
    except IntegrityError:
        return None  # held, and not expired
    return Held(name=name, token=token)


def lease_wait(*, name: str, ttl: float, deadline: float, poll: float = 0.05) -> Held | None:
    """Take the lease, waiting for it until `deadline` (time.monotonic()); None if not."""
    while True:
        held = lease_acquire(name=name, ttl=ttl)
        if held is not None or time.monotonic() >= deadline:
            return held
        time.sleep(min(poll, max(deadline - time.monotonic(), 0)))
        poll = min(poll * 2, 0.5)


def lease_release(held: Held) -> None:
    """Give the lease back, if it is still ours (it may have expired and been taken): the
    row goes, so the table holds only the leases in use."""
    Lease.objects.filter(name=held.name, token=held.token).delete()


def agent_lease(agent_id: int) -> str:
    """The lease every MEMORY.md writer of one agent takes (seed 004's sequential queue)."""
    return f"consolidate:{agent_id}"


def lease_extend(held: Held, *, ttl: float) -> bool:
    """Push our lease's expiry `ttl` seconds ahead; False if it is no longer ours."""
    until = timezone.now() + timedelta(seconds=ttl)
    return Lease.objects.filter(name=held.name, token=held.token).update(until=until) == 1
