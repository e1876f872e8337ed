"""A write that lost a race with a delete (its foreign key fails at commit) answers 409, not
500; any other integrity error stays a 500 (apps/core/races.py). Real errors from the
database in use."""

import json
import uuid

import pytest
from django.db import IntegrityError, transaction
from django.test import RequestFactory

from apps.conversations.models import Message, Session
from apps.core.races import DETAIL, integrity_error, is_vanished_reference
from memoryhub.api import api

pytestmark = pytest.mark.django_db


def _raised(write) -> IntegrityError:
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        write()
    return caught.value


@pytest.mark.django_db(transaction=True)  # the key is checked at a real commit
def test_a_row_naming_a_removed_row_is_a_409(agent):
    exc = _raised(
        lambda: Message.objects.create(
            agent=agent, session_id=uuid.uuid4(), role="user", content="orphan"
        )
    )

    response = integrity_error(RequestFactory().post("/api/v1/x"), exc)

    assert is_vanished_reference(exc)
    assert (response.status_code, json.loads(response.content)) == (409, {"detail": DETAIL})
    assert not Message.objects.exists()


def test_any_other_integrity_error_stays_a_500(agent):
    Session.objects.create(agent=agent, key="k")
    exc = _raised(lambda: Session.objects.create(agent=agent, key="k"))  # unique key

    response = integrity_error(RequestFactory().post("/api/v1/x"), exc)

    assert not is_vanished_reference(exc)
    assert (response.status_code, json.loads(response.content)) == (
        500,
        {"detail": "internal error"},
    )


def test_the_agent_api_answers_integrity_errors_through_it():
    assert api._lookup_exception_handler(IntegrityError("x")) == integrity_error
