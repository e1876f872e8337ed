"""Admin pages see the agents of the staff user's teams; superusers see every team."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest


def for_teams(qs: QuerySet, request: HttpRequest, path: str = "agent__team") -> QuerySet:
    """`qs` limited to rows whose team (at `path`) has the user as a member."""
    if request.user.is_superuser:
        return qs
    # One membership row per (team, user): the join cannot duplicate rows.
    return qs.filter(**{f"{path}__memberships__user": request.user})


class TeamScopedAdmin(admin.ModelAdmin):
    """A ModelAdmin whose list, search, filters and object pages keep to the user's teams:
    another team's object answers 404, as if it did not exist."""

    team_path = "agent__team"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return for_teams(super().get_queryset(request), request, self.team_path)
