"""The provider guard: a provider called inside a transaction the code opened is refused in
the test suite (MEMORYHUB_PROVIDER_GUARD="raise"), logged by default, and pytest-django's
own test transaction does not count."""

import logging

import pytest
from django.db import transaction

from apps.providers.embeddings.fake import HashEmbedder
from apps.providers.guard import ProviderCallInTransaction
from apps.providers.llm.base import ChatMessage
from apps.providers.llm.openai import OpenAIChat

pytestmark = pytest.mark.django_db

HI = [ChatMessage(role="user", content="hi")]


def test_the_suite_runs_with_the_guard_raising(settings):
    assert settings.MEMORYHUB_PROVIDER_GUARD == "raise"


def test_outside_a_transaction_the_call_goes_through():
    # inside pytest-django's test transaction, which is the test's, not the code's
    assert len(HashEmbedder().embed(["hello"])[0]) == 384


def test_an_embedding_inside_atomic_is_refused():
    refused = pytest.raises(ProviderCallInTransaction, match=r"fake-hash embedding called inside 1")
    with refused, transaction.atomic():
        HashEmbedder().embed(["hello"])


def test_nested_atomic_blocks_are_counted():
    refused = pytest.raises(ProviderCallInTransaction, match=r"inside 2 open atomic")
    with refused, transaction.atomic(), transaction.atomic():
        HashEmbedder().embed(["hello"])


def test_a_chat_completion_inside_atomic_is_refused_before_any_request(llm_server):
    model = OpenAIChat(url=llm_server.url, model="m")

    refused = pytest.raises(ProviderCallInTransaction, match="m chat completion called inside")
    with refused, transaction.atomic():
        model.complete(HI)

    assert llm_server.requests == []


def test_log_mode_warns_with_the_stack_and_goes_on(settings, caplog):
    settings.MEMORYHUB_PROVIDER_GUARD = "log"

    with caplog.at_level(logging.WARNING, logger="apps.providers.guard"), transaction.atomic():
        vector = HashEmbedder().embed(["hello"])[0]

    assert len(vector) == 384
    assert [r.getMessage() for r in caplog.records] == [
        "fake-hash embedding called inside 1 open atomic block(s): compute first, then write"
    ]
    assert caplog.records[0].stack_info is not None


def test_off_mode_is_silent(settings, caplog):
    settings.MEMORYHUB_PROVIDER_GUARD = "off"

    with caplog.at_level(logging.WARNING), transaction.atomic():
        HashEmbedder().embed(["hello"])

    assert caplog.records == []
