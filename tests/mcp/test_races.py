"""A tool call that lost a race with a delete (a foreign key failing at commit) is a tool
error with the API's retryable 409 detail, not "internal error"; any other integrity error
stays "internal error". Real errors from the database in use, through `run`."""

import uuid

import pytest
from django.db import transaction
from ninja import Schema

from apps.conversations.models import Message, Session
from apps.core.races import DETAIL
from apps.mcp.tools.base import READ, About, Tool, run


class NoArgs(Schema):
    pass


def _tool(write) -> Tool:
    """A tool whose call is `write` in its own transaction (the endpoints' own shape)."""

    def call(request, args):
        with transaction.atomic():
            write(request.auth)

    return Tool(
        name="racer",
        endpoint=call,
        params=NoArgs,
        call=call,
        about=About(title="Racer", description="Writes one row.", hints=READ),
    )


def _text(result) -> str:
    assert result.is_error
    [content] = result.content
    return content.text


@pytest.mark.django_db(transaction=True)  # the key is checked at a real commit
def test_a_row_naming_a_removed_row_is_the_apis_retryable_detail(agent):
    def orphan(owner):
        Message.objects.create(agent=owner, session_id=uuid.uuid4(), role="user", content="x")

    result = run(_tool(orphan), agent, {})

    assert _text(result) == DETAIL
    assert not Message.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_any_other_integrity_error_stays_internal(agent):
    Session.objects.create(agent=agent, key="k")

    result = run(_tool(lambda owner: Session.objects.create(agent=owner, key="k")), agent, {})

    assert _text(result) == "internal error"
    assert Session.objects.filter(agent=agent).count() == 1
