from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from apps.core import views
from apps.mcp.views import mcp_endpoint
from memoryhub.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("review/", include("apps.review.urls")),
    path("api/docs", RedirectView.as_view(url="/api/v1/docs", permanent=False)),
    path("api/v1/", api.urls),
    path("mcp", mcp_endpoint, name="mcp"),
]
