"""Issue 39's two end users of one agent, each with personal data in failing tool calls: an
e-mail address, a phone number, an IBAN, a card number, an IP address, a token-like string
and their own name, in the call's arguments, its error, the request before it and the error
record the agent writes afterwards. Built through the JSON API as an agent would."""

import re
from dataclasses import dataclass

from tests.support.client import ApiClient

CHARGE = "charge_card"
SMS = "send_sms"
# The lesson every user may see: the tool, the error class and what resolved it.
ERROR_CLASS = "payment refused"
RESOLUTION = "confirm the card with the bank, then retry once"


@dataclass(frozen=True)
class Person:
    user: str
    name: str
    session_key: str
    email: str
    phone: str
    iban: str
    card: str
    ip: str
    token: str

    @property
    def personal(self) -> dict[str, str]:
        """Each kind of personal data this person's failures carry."""
        return {
            "email": self.email,
            "phone": self.phone,
            "iban": self.iban,
            "card": self.card,
            "ip": self.ip,
            "token": self.token,
            "name": self.name,
            "user": self.user,
        }

    @property
    def marks(self) -> list[str]:
        """What must never show outside this person's own reads, lower-cased: each datum as
        written, the digits of the numbers without their spaces, and the surname alone."""
        found = {value.lower() for value in self.personal.values()}
        for value in (self.phone, self.iban, self.card):
            found.add(re.sub(r"[\s+]", "", value).lower())
        found.add(self.name.split()[-1].lower())
        return sorted(found)

    @property
    def error(self) -> str:
        return (
            f"{ERROR_CLASS} for {self.name} <{self.email}>: IBAN {self.iban}, card {self.card}, "
            f"phone {self.phone}, from {self.ip}, token {self.token}"
        )

    @property
    def sms_error(self) -> str:
        return f"invalid number {self.phone} for {self.name}"

    @property
    def arguments(self) -> dict[str, str]:
        return {
            "holder": self.name,
            "email": self.email,
            "iban": self.iban,
            "card": self.card,
            "client_ip": self.ip,
            "api_token": self.token,
        }

    @property
    def request(self) -> str:
        return f"Please pay the invoice with my card {self.card}, I am {self.name} ({self.email})."


CAROL = Person(
    user="telegram:5501",
    name="Carol Jensen",
    session_key="carol-chat",
    email="carol.jensen@example.org",
    phone="+45 20 12 34 56",
    iban="DK50 0040 0440 1162 43",
    card="4111 1111 1111 1111",
    ip="203.0.113.77",
    token="sk-live-9f8e7d6c5b4a39281716a5f4e3d2c1b0",
)
BRUNO = Person(
    user="telegram:7702",
    name="Bruno Ferreira",
    session_key="bruno-chat",
    email="bruno.ferreira@example.net",
    phone="+351 912 345 678",
    iban="PT50 0002 0123 1234 5678 9015 4",
    card="5500 0000 0000 0004",
    ip="198.51.100.23",
    token="ghp_4Fq9LmZx2Rt7Wv1Kp8Ns3Dj6Hb0Yc5Ue2Ia9",
)
PEOPLE = (CAROL, BRUNO)


def other_of(person: Person) -> Person:
    return BRUNO if person is CAROL else CAROL


def ok(response, status: int = 200):
    assert response.status_code == status, (response.status_code, response.content[:500])
    return response.json()


def _failing_calls(p: Person) -> list[dict]:
    """The user's request, the assistant's two tool calls, and both failing."""
    calls = [
        {"id": f"{p.session_key}-1", "type": "function",
         "function": {"name": CHARGE, "arguments": _json(p.arguments)}},
        {"id": f"{p.session_key}-2", "type": "function",
         "function": {"name": SMS, "arguments": _json({"to": p.phone, "name": p.name})}},
    ]  # fmt: skip
    return [
        {"role": "user", "content": p.request},
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "tool_call_id": calls[0]["id"], "content": p.error, "is_error": True},
        {"role": "tool", "tool_call_id": calls[1]["id"], "content": p.sms_error, "is_error": True},
    ]


def _json(value: dict) -> str:
    import json

    return json.dumps(value)


def person_build(api: ApiClient, p: Person) -> None:
    """The person's session, their name as a fact of theirs, two failing tool calls and the
    error record the agent writes once the payment went through."""
    ok(api.post("/sessions", {"key": p.session_key, "user": p.user}), 201)
    ok(api.post("/facts", {"key": "name", "value": p.name, "category": "identity",
                           "user": p.user}), 201)  # fmt: skip
    ok(api.post(f"/sessions/{p.session_key}/messages", {"messages": _failing_calls(p)}), 201)
    record = {
        "session_id": p.session_key,
        "tool_name": CHARGE,
        "error": p.error,
        "arguments": p.arguments,
        "strategy": f"charged card {p.card} again for {p.name}",
        "outcome": "resolved",
        "resolution": f"{RESOLUTION} ({p.name}, {p.phone})",
    }
    assert api.post("/errors", record).status_code in (200, 201)


def build(api: ApiClient) -> None:
    for p in PEOPLE:
        person_build(api, p)
