"""Unknown API paths answer JSON, and the HTML error pages render without collectstatic."""

import json

import pytest
from django.test import Client, override_settings
from django.urls import include, path

from apps.core.storage import ForgivingManifestStaticFilesStorage

pytestmark = pytest.mark.django_db

FORGIVING = "apps.core.storage.ForgivingManifestStaticFilesStorage"
STRICT = "whitenoise.storage.CompressedManifestStaticFilesStorage"


def _boom(request):
    raise RuntimeError("a view that breaks")


# ROOT_URLCONF for the 500 test: the project's URLs plus one view that raises.
urlpatterns = [path("boom", _boom), path("", include("memoryhub.urls"))]


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/v1/no-such-thing"),
        ("get", "/api/v1/"),
        ("get", "/api/v1/no/such/deep/path"),
        ("post", "/api/v1/no-such-thing"),
        ("patch", "/api/v1/facts/1/nope"),
        ("delete", "/api/v1/sessionz"),
        # No <path:> converter takes a newline, so no API route matches (found by schemathesis).
        ("get", "/api/v1/memory/history/files/%C2%B7%0A"),
        ("get", "/api/v1/%0A"),
    ],
)
@pytest.mark.parametrize("authenticated", [True, False])
def test_an_unknown_api_path_is_a_json_404(api, method, url, authenticated):
    headers = api._headers() if authenticated else {}
    response = getattr(api.client, method)(url, headers=headers)

    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"detail": "not found"}


def test_known_paths_still_win_over_the_fallback(api):
    assert api.get("/agent").status_code == 200
    # A known path with a wrong method is 405, not swallowed by the fallback's 404.
    wrong_method = api.client.put("/api/v1/agent", headers=api._headers())
    assert wrong_method.status_code == 405
    assert wrong_method.json() == {"detail": "method not allowed"}
    assert wrong_method["Allow"] == "GET"
    assert api.client.get("/api/v1/openapi.json").status_code == 200


def _storages(backend):
    return {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": backend},
    }


def test_without_collectstatic_the_404_page_renders(tmp_path):
    # An empty STATIC_ROOT: no manifest, no files, as on a fresh server.
    with override_settings(DEBUG=False, STATIC_ROOT=tmp_path, STORAGES=_storages(FORGIVING)):
        response = Client().get("/review/no-such-page")

    assert response.status_code == 404
    assert b"Not found" in response.content
    assert b'href="/static/css/memoryhub.css"' in response.content


def test_the_strict_storage_is_what_broke_the_404_page(tmp_path):
    # The control: whitenoise's own storage raises for the missing manifest entry.
    strict = override_settings(DEBUG=False, STATIC_ROOT=tmp_path, STORAGES=_storages(STRICT))
    with strict, pytest.raises(ValueError, match="manifest"):
        Client().get("/review/no-such-page")


def test_names_in_the_manifest_are_still_hashed(tmp_path):
    manifest = {"version": "1.1", "paths": {"css/memoryhub.css": "css/memoryhub.0123abcd.css"}}
    (tmp_path / "staticfiles.json").write_text(json.dumps(manifest))
    storage = ForgivingManifestStaticFilesStorage(location=tmp_path, base_url="/static/")

    with override_settings(DEBUG=False):
        assert storage.url("css/memoryhub.css") == "/static/css/memoryhub.0123abcd.css"
        assert storage.url("css/new.css") == "/static/css/new.css"


def test_the_500_page_renders_without_collectstatic(tmp_path):
    with override_settings(
        DEBUG=False,
        STATIC_ROOT=tmp_path,
        STORAGES=_storages(STRICT),  # even the strict storage: the page needs no static
        ROOT_URLCONF="tests.core.test_input_routes",
    ):
        response = Client(raise_request_exception=False).get("/boom")

    assert response.status_code == 500
    assert b"<h1>Server error</h1>" in response.content
