from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from apps.core import views
from apps.mcp.views import mcp_endpoint, no_oauth
from memoryhub.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("review/", include("apps.review.urls")),
    path("api/docs", RedirectView.as_view(url="/api/v1/docs", permanent=False)),
    path("api/v1/", api.urls),
    path("mcp", mcp_endpoint, name="mcp"),
    # No OAuth: what an MCP client probes after a 401 answers a JSON 404 (docs/mcp.md).
    re_path(
        r"^\.well-known/(?:oauth-protected-resource|oauth-authorization-server|"
        r"openid-configuration)(?:/.*)?$",
        no_oauth,
    ),
    path("register", no_oauth),
    path("authorize", no_oauth),
    path("token", no_oauth),
]
