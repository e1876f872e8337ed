"""memoryhub authenticates MCP clients with API keys and has no OAuth authorization server. A
401 on /mcp names no protected resource metadata, the discovery documents answer 404, and the
SDK's own client, given a bad key, fails with an error that says so instead of being led
into an OAuth flow (docs/mcp.md, "Authentication")."""

import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider, OAuthRegistrationError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError

from apps.mcp.views import NO_OAUTH
from tests.mcp.conftest import TIMEOUT, McpClient, leaves
from tests.mcp.test_http import ACCEPT, INITIALIZE

pytestmark = pytest.mark.django_db(transaction=True)

DISCOVERY = [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/mcp",
    "/.well-known/openid-configuration",
]
FLOW = ["/register", "/authorize", "/token"]


def _rpc_method(request: httpx2.Request) -> str | None:
    """The JSON-RPC method a POST to /mcp carries (None for any other request)."""
    if request.url.path != "/mcp":
        return None
    return json.loads(request.content)["method"]


@dataclass
class Recorder:
    """Every request an httpx2 client sends (its JSON-RPC method, for /mcp), and the status
    and type of each answer."""

    exchanges: list[tuple] = field(default_factory=list)

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        path = urlsplit(str(request.url)).path
        kind = response.headers.get("content-type", "")
        self.exchanges.append(
            (request.method, path, _rpc_method(request), response.status_code, kind)
        )

    def client(self, key: str, **kwargs) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"},
            timeout=httpx2.Timeout(TIMEOUT),
            event_hooks={"response": [self.on_response]},
            **kwargs,
        )


def _connect(url: str, http: httpx2.AsyncClient) -> BaseException:
    """What the SDK's client raises when it tries to open a session through `http`."""
    with pytest.raises((Exception, BaseExceptionGroup)) as raised:
        McpClient(streamable_http_client(f"{url}/mcp", http_client=http), http=http)
    return raised.value


@pytest.mark.parametrize(
    ("authorization", "challenge"),
    [
        (None, 'Bearer realm="memoryhub"'),
        ("Basic bWhfbm9wZQ==", 'Bearer realm="memoryhub"'),
        (
            "Bearer mh_nope_nope",
            'Bearer realm="memoryhub", error="invalid_token", '
            'error_description="The API key is unknown, malformed or revoked"',
        ),
    ],
)
def test_a_401_challenges_for_a_bearer_key_and_names_no_resource_metadata(
    live_url, agent, authorization, challenge
):
    headers = {**ACCEPT, **({"Authorization": authorization} if authorization else {})}

    response = httpx2.post(f"{live_url}/mcp", content=json.dumps(INITIALIZE), headers=headers)

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == challenge
    assert "resource_metadata" not in response.headers["www-authenticate"]
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", None, -32600)
    assert body["error"]["message"].startswith("Unauthorized: ")
    assert body["error"]["message"].endswith(NO_OAUTH)


@pytest.mark.parametrize("path", DISCOVERY + FLOW)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_the_oauth_discovery_documents_and_endpoints_answer_a_json_404(live_url, path, method):
    response = httpx2.request(method, f"{live_url}{path}", json={} if method == "POST" else None)

    assert (response.status_code, response.headers["content-type"]) == (404, "application/json")
    assert response.json() == {"detail": NO_OAUTH}


def test_the_sdk_client_with_a_bad_key_fails_with_the_reason_and_tries_no_oauth(live_url, agent):
    recorder = Recorder()

    raised = _connect(live_url, recorder.client("mh_nope_nope"))

    assert [(type(e), str(e)) for e in leaves(raised)] == [
        (MCPError, "Unauthorized: the API key is unknown, malformed or revoked. " + NO_OAUTH)
    ]
    # The SDK's version probe, then the initialize it falls back to, both refused: nothing
    # else, so no discovery, no registration and no login.
    assert recorder.exchanges == [
        ("POST", "/mcp", "server/discover", 401, "application/json"),
        ("POST", "/mcp", "initialize", 401, "application/json"),
    ]


@dataclass
class MemoryStorage:
    """The SDK's token storage protocol, in memory."""

    tokens: OAuthToken | None = None
    client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def test_an_oauth_capable_sdk_client_finds_no_authorization_server_and_never_logs_in(
    live_url, agent
):
    """A client set up for OAuth (as some desktop clients are) runs the spec's discovery on a
    401. Every document it asks for is a JSON 404; the SDK then tries the 2025-03-26
    default registration endpoint once, is told there is no OAuth, and stops: it never
    reaches an authorization or token endpoint, and never sends the user to a login page."""
    redirected: list[str] = []

    async def redirect_handler(url: str) -> None:
        redirected.append(url)

    async def callback_handler():
        raise AssertionError("no authorization response can come: there is no login")

    provider = OAuthClientProvider(
        server_url=f"{live_url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="test", redirect_uris=["http://127.0.0.1:9/callback"]
        ),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    recorder = Recorder()

    raised = _connect(live_url, recorder.client("mh_nope_nope", auth=provider))

    assert [(type(e), str(e)) for e in leaves(raised)] == [
        (OAuthRegistrationError, "Registration failed: 404 " + json.dumps({"detail": NO_OAUTH}))
    ]
    json_404 = (None, 404, "application/json")
    assert recorder.exchanges == [
        ("POST", "/mcp", "server/discover", 401, "application/json"),
        ("GET", "/.well-known/oauth-protected-resource/mcp", *json_404),
        ("GET", "/.well-known/oauth-protected-resource", *json_404),
        ("GET", "/.well-known/oauth-authorization-server", *json_404),
        ("POST", "/register", *json_404),
    ]
    assert redirected == []
