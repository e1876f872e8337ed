"""Issue 39 point 1, the agent keeps the lesson, not the person: alice and bruno, two end
users of one agent, fail the same tool with their own name, e-mail, phone, IBAN, card, IP
and key in its arguments and error. Error memory and the error learning are one shared,
de-identified lesson; each user's raw text is theirs alone; erasing alice leaves nothing of
her in error memory."""

import io
import json
import re
import tarfile
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from apps.agents.models import MemberRole
from apps.agents.services import membership_set
from apps.learnings.models import ErrorDetail, ErrorRecord, Learning
from tests.factories import issue_key
from tests.mcp.test_server_unit import ok

pytestmark = pytest.mark.django_db

TOOL = "pay_invoice"


def iban(country: str, bban: str) -> str:
    """A valid IBAN (ISO 13616 check digits), printed in groups of four."""
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    compact = f"{country}{98 - int(digits) % 97:02d}{bban}"
    return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))


@dataclass(frozen=True)
class Payer:
    user: str
    name: str
    email: str
    phone: str
    iban: str
    card: str
    ip: str
    token: str

    @property
    def error(self) -> str:
        return (
            f"payment refused for {self.name}, IBAN {self.iban}, card {self.card}, "
            f"contact {self.email} / {self.phone}, from {self.ip}, key {self.token}"
        )

    @property
    def arguments(self) -> dict:
        return {"payee": self.name, "iban": self.iban, "card": self.card, "email": self.email,
                "phone": self.phone, "ip": self.ip, "api_key": self.token}  # fmt: skip

    @property
    def request(self) -> str:
        return f"Pay my invoice please, I am {self.name}."

    @property
    def strings(self) -> list[str]:
        """Every string of theirs a read must not show another user."""
        first, last = self.name.split()
        parts = [self.user, self.email, self.phone, self.iban, self.card, self.ip, self.token]
        return [first, last, *parts, self.iban.replace(" ", "")]


ALICE = Payer(
    user="telegram:101",
    name="Alice Moreau",
    email="alice.moreau@example.com",
    phone="+351 912 345 678",
    iban=iban("PT", "000201231234567890154"),
    card="4111 1111 1111 1111",
    ip="203.0.113.7",
    token="sk-alice0123456789abcdefXYZ",
)
BRUNO = Payer(
    user="telegram:202",
    name="Bruno Silva",
    email="bruno.silva@example.org",
    phone="+49 151 2345 6789",
    iban=iban("DE", "370400440532013000"),
    card="5555-5555-5555-4444",
    ip="198.51.100.23",
    token="ghp_bruno0123456789abcdefghijklmnopqrstuv",
)
# The one lesson both failures are, as every other reader sees it.
SHARED_ERROR = (
    "payment refused for [name], IBAN [iban], card [card], contact [email] / [phone], "
    "from [ip], key [token]"
)
RESOLUTION = "retry after the payer confirms by e-mail ({email})"
SHARED_RESOLUTION = "retry after the payer confirms by e-mail ([email])"
SHARED_LEARNING = f'{TOOL} failed with "{SHARED_ERROR}"'


def fail(api, payer: Payer, call_id: str):
    """The payer's request, the assistant's call with their data, and the call failing."""
    call = {"id": call_id, "type": "function",
            "function": {"name": TOOL, "arguments": json.dumps(payer.arguments)}}  # fmt: skip
    return api.post(
        f"/sessions/{payer.user}-chat/messages",
        {
            "messages": [
                {"role": "user", "content": payer.request},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call_id, "content": payer.error, "is_error": True},
            ]
        },
    )


def leaks(data, payer: Payer) -> list[str]:
    """The payer's strings found in `data` (any JSON-able value or text)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    return [s for s in payer.strings if s in text]


def page(client, url: str, **params) -> str:
    """A review page without its user filter's select (which lists the agent's users)."""
    html = client.get(url, params).content.decode()
    return re.sub(r'<select name="user">.*?</select>', "", html, flags=re.S)


def export_errors_md(api) -> str:
    with tarfile.open(fileobj=io.BytesIO(api.get("/workspace/export").content), mode="r:gz") as t:
        [member] = [m for m in t.getmembers() if m.name.endswith("learnings/errors.md")]
        return t.extractfile(member).read().decode()


@pytest.fixture
def world(api):
    """Both users with their name as a fact, alice's failure resolved (with her e-mail in
    the resolution), then bruno's same failure: his append's answer."""
    for payer in (ALICE, BRUNO):
        session = {"key": f"{payer.user}-chat", "user": payer.user}
        assert api.post("/sessions", session).status_code == 201
        fact = {"user": payer.user, "category": "profile", "key": "name", "value": payer.name}
        assert api.post("/facts", fact).status_code == 201
    assert fail(api, ALICE, "call_a").status_code == 201
    record = ErrorRecord.objects.get()
    resolved = api.patch(
        f"/errors/{record.pk}?user=telegram:101",
        {"outcome": "resolved", "resolution": RESOLUTION.format(email=ALICE.email)},
    )
    assert resolved.status_code == 200, resolved.content
    appended = fail(api, BRUNO, "call_b")
    assert appended.status_code == 201, appended.content
    return appended.json()


def test_two_users_hitting_one_failure_make_one_deidentified_lesson(api, world):
    record = ErrorRecord.objects.get()
    learning = Learning.objects.get(kind="error")

    # bruno's failure hit alice's record (1) and was hinted with it (2)
    assert (record.tool_name, record.error, record.hit_count) == (TOOL, SHARED_ERROR, 2)
    assert (record.outcome, record.resolution) == ("resolved", SHARED_RESOLUTION)
    assert record.arguments == {"payee": "[name]", "iban": "[iban]", "card": "[card]",
                                "email": "[email]", "phone": "[phone]", "ip": "[ip]",
                                "api_key": "[token]"}  # fmt: skip
    assert record.context == {"tool_call_id": "call_a"}  # no session key of a user's
    assert (record.origin_user, learning.origin_user) == (ALICE.user, ALICE.user)
    assert (learning.content, learning.seen_count, learning.user) == (SHARED_LEARNING, 2, "")
    assert learning.session_key == ""
    details = sorted(ErrorDetail.objects.all(), key=lambda d: (d.user, d.record_id or 0))
    assert [(d.user, d.record_id, d.learning_id) for d in details] == [
        (ALICE.user, None, learning.pk),
        (ALICE.user, record.pk, None),
        (BRUNO.user, None, learning.pk),
        (BRUNO.user, record.pk, None),
    ]
    [alices] = [d for d in details if d.user == ALICE.user and d.record_id]
    assert (alices.error, alices.arguments, alices.request) == (
        ALICE.error,
        ALICE.arguments,
        ALICE.request,
    )
    assert (alices.resolution, alices.session_key) == (
        RESOLUTION.format(email=ALICE.email),
        f"{ALICE.user}-chat",
    )


def test_bruno_reads_the_lesson_and_nothing_of_alice(api, world):
    hints = world["hints"]
    assert [(h["tool_name"], h["rule"], h["text"]) for h in hints] == [
        (TOOL, "apply", f"apply: {SHARED_RESOLUTION}")
    ]
    # his own failure is the record's raw text he sees; hers never
    assert hints[0]["error"] == BRUNO.error
    context = api.post("/context", {"session_id": f"{BRUNO.user}-chat", "lifecycle": "off"}).json()
    system = {p["name"]: p["content"] for p in context["system"]["parts"]}
    assert system[f"hints/{TOOL}"] == f"Tool {TOOL} failed before:\n- apply: {SHARED_RESOLUTION}"
    assert TOOL in system["learnings/errors.md"]
    listed = api.get("/errors", {"user": BRUNO.user}).json()["items"]
    assert [(e["tool_name"], e["error"], e["resolution"]) for e in listed] == [
        (TOOL, BRUNO.error, SHARED_RESOLUTION)
    ]
    search = {"query": "payment refused", "session_id": f"{BRUNO.user}-chat"}
    found = api.post("/errors/search", search)
    assert [h["record"]["error"] for h in found.json()["items"]] == [BRUNO.error]
    learnings = api.get("/learnings", {"user": BRUNO.user, "kind": "error"}).json()["items"]
    assert [
        item["content"].startswith(f'{TOOL} failed with "{BRUNO.error}"') for item in learnings
    ] == [True]
    everyone = api.get("/errors").json()["items"]
    assert [(e["error"], e["resolution"]) for e in everyone] == [(SHARED_ERROR, SHARED_RESOLUTION)]
    assert [item["content"] for item in api.get("/learnings").json()["items"]] == [SHARED_LEARNING]
    exported = export_errors_md(api)
    assert f"\n\n{SHARED_LEARNING}\n" in exported
    assert "session:" not in exported

    reads = [world, context, listed, found.json(), learnings, everyone, exported]
    assert [leaks(read, ALICE) for read in reads] == [[]] * len(reads)
    assert [leaks(read, BRUNO) for read in (everyone, exported)] == [[], []]


def test_alice_reads_her_own_raw_text_and_nothing_of_bruno(api, world):
    [mine] = api.get("/errors", {"user": ALICE.user}).json()["items"]
    assert (mine["error"], mine["arguments"]) == (ALICE.error, ALICE.arguments)
    assert mine["resolution"] == RESOLUTION.format(email=ALICE.email)
    one = api.get(f"/errors/{mine['id']}", {"user": ALICE.user}).json()
    assert one["error"] == ALICE.error
    [learning] = api.get("/learnings", {"user": ALICE.user, "kind": "error"}).json()["items"]
    assert learning["content"] == (
        f'{TOOL} failed with "{ALICE.error}"; '
        f"arguments: {json.dumps(ALICE.arguments, sort_keys=True)}; "
        f'user request: "{ALICE.request}"'
    )
    assert leaks([mine, one, learning], BRUNO) == []


@pytest.mark.django_db(transaction=True)  # the MCP server runs its tools in its own thread
def test_the_mcp_error_tools_acting_for_bruno_show_nothing_of_alice(agent, world):
    key = issue_key(agent)
    record = ErrorRecord.objects.get()

    searched = ok(key, "search_error_memory", {"query": "payment refused", "user": BRUNO.user})
    listed = ok(key, "read_error_memory", {"user": BRUNO.user})
    one = ok(key, "read_error_memory", {"error_id": record.pk, "user": BRUNO.user})
    everyone = ok(key, "read_error_memory", {})

    assert [h["record"]["resolution"] for h in searched["items"]] == [SHARED_RESOLUTION]
    assert [(e["tool_name"], e["error"]) for e in listed["items"]] == [(TOOL, BRUNO.error)]
    assert one["error"] == BRUNO.error
    assert [e["error"] for e in everyone["items"]] == [SHARED_ERROR]
    assert leaks([searched, listed, one, everyone], ALICE) == []
    assert leaks(everyone, BRUNO) == []


def test_the_review_page_shows_a_users_raw_text_only_under_their_filter(api, agent, world):
    person = get_user_model().objects.create_user(username="vera", password="pw-vera")
    membership_set(team=agent.team, user=person, role=MemberRole.VIEWER)
    client = Client()
    client.force_login(person)
    url = reverse("review:learnings", args=[agent.slug])

    filtered = page(client, url, user=ALICE.user)
    unfiltered = page(client, url)
    bruno = page(client, url, user=BRUNO.user)

    assert "[name], IBAN [iban]" in unfiltered
    assert (leaks(unfiltered, ALICE), leaks(unfiltered, BRUNO)) == ([], [])
    assert leaks(bruno, ALICE) == []
    assert ALICE.email in filtered
    assert leaks(filtered, BRUNO) == []


def test_erasing_alice_leaves_nothing_of_her_in_error_memory(api, world):
    response = api.delete(f"/users/{ALICE.user}")

    assert response.status_code == 200
    assert response.json()["deleted"]["error_details"] == 2
    rows = [
        *ErrorRecord.objects.values(),
        *Learning.objects.values(),
        *ErrorDetail.objects.values(),
    ]
    assert leaks(rows, ALICE) == []
    assert ALICE.user not in json.dumps(rows, default=str)
    assert not ErrorDetail.objects.filter(user=ALICE.user).exists()
    assert ErrorDetail.objects.filter(user=BRUNO.user).count() == 2
    record = ErrorRecord.objects.get()
    assert (record.error, record.origin_user, record.session_id) == (SHARED_ERROR, "", None)
    # the lesson stays, for bruno and everyone
    assert [(h["rule"]) for h in fail(api, BRUNO, "call_c").json()["hints"]] == ["apply"]


def test_remember_error_for_a_user_shares_it_deidentified_and_answers_them_raw(api):
    api.post("/facts", {"user": ALICE.user, "key": "name", "value": ALICE.name})
    body = {"tool_name": TOOL, "error": ALICE.error, "arguments": ALICE.arguments,
            "strategy": f"asked {ALICE.name} again", "user": ALICE.user}  # fmt: skip

    response = api.post("/errors", body)

    assert response.status_code == 201, response.content
    assert (response.json()["error"], response.json()["strategy"]) == (
        ALICE.error,
        f"asked {ALICE.name} again",
    )
    record = ErrorRecord.objects.get()
    assert (record.error, record.strategy, record.origin_user) == (
        SHARED_ERROR,
        "asked [name] again",
        ALICE.user,
    )
    [everyone] = api.get("/errors").json()["items"]
    assert (everyone["error"], leaks(everyone, ALICE)) == (SHARED_ERROR, [])
    # the same failure of hers again is the same record (the de-identified form matched)
    again = api.post("/errors", body)
    assert (again.status_code, ErrorRecord.objects.count()) == (200, 1)


DIFFERS = [{"loc": ["body", "user"], "msg": "user differs from the session's user",
            "type": "value_error"}]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "path", "data", "status", "detail"),
    [
        ("post", "/errors/search", {"query": "x", "user": "someone", "session_id": "s-chat"},
         422, DIFFERS),
        ("post", "/errors", {"tool_name": "t", "error": "e", "user": "someone",
                             "session_id": "s-chat"}, 422, DIFFERS),
        ("get", "/errors", {"user": " "}, 422,
         [{"loc": ["query", "user"], "type": "value_error",
           "msg": "Value error, user must be 1-200 printable characters"}]),
        ("post", "/errors/search", {"query": "x", "session_id": "nope"}, 404,
         "session not found"),
    ],
)  # fmt: skip
def test_a_user_that_is_not_the_sessions_or_no_user_is_refused(
    api, method, path, data, status, detail
):
    api.post("/sessions", {"key": "s-chat", "user": "theirs"})

    response = getattr(api, method)(path, data)

    assert (response.status_code, response.json()["detail"]) == (status, detail)
    assert ErrorRecord.objects.count() == 0


def test_a_users_own_export_holds_their_raw_failures_and_nothing_of_the_other(api, world):
    response = api.get("/workspace/export", {"user": ALICE.user})
    with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
        data = json.loads(archive.extractfile(".memoryhub/user-data.json").read())

    failures = sorted(data["failures"], key=lambda f: f["of"])
    assert [(f["of"], f["tool_name"], f["shared_as"]) for f in failures] == [
        ("error_record", TOOL, SHARED_ERROR),
        ("learning", "", SHARED_LEARNING),
    ]
    record = failures[0]
    assert (record["error"], record["arguments"], record["request"]) == (
        ALICE.error,
        ALICE.arguments,
        ALICE.request,
    )
    assert record["resolution"] == RESOLUTION.format(email=ALICE.email)
    assert ALICE.email in failures[1]["content"]
    assert leaks(data, BRUNO) == []
