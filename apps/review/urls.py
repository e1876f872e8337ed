"""The review pages, under /review/: every page below agents/<slug>/ checks membership."""

from django.urls import path

from apps.review.views import (
    agent,
    dashboard,
    entries,
    facts,
    keys,
    learnings,
    queue,
    runs,
    search,
    sessions,
    user_erase,
    users,
)

app_name = "review"

A = "agents/<slug:slug>/"

urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path(A, agent.agent_detail, name="agent"),
    path(A + "audit/", agent.audit_list, name="audit"),
    path(A + "keys/", keys.key_list, name="keys"),
    path(A + "keys/new/", keys.key_create, name="key_create"),
    path(A + "keys/<int:key_id>/revoke/", keys.key_revoke, name="key_revoke"),
    path(A + "sessions/", sessions.session_list, name="sessions"),
    path(A + "sessions/<uuid:session_id>/", sessions.session_timeline, name="timeline"),
    path(A + "search/", search.search, name="search"),
    path(A + "facts/", facts.fact_list, name="facts"),
    path(A + "facts/<int:fact_id>/", facts.fact_detail, name="fact"),
    path(A + "facts/<int:fact_id>/edit/", facts.fact_edit, name="fact_edit"),
    path(A + "facts/<int:fact_id>/delete/", facts.fact_delete, name="fact_delete"),
    path(A + "queue/", queue.queue, name="queue"),
    path(A + "queue/<int:fact_id>/approve/", queue.queue_approve, name="queue_approve"),
    path(A + "queue/<int:fact_id>/edit/", queue.queue_edit, name="queue_edit"),
    path(A + "queue/<int:fact_id>/reject/", queue.queue_reject, name="queue_reject"),
    path(A + "queue/<int:fact_id>/merge/", queue.queue_merge, name="queue_merge"),
    path(A + "entries/", entries.entry_list, name="entries"),
    path(A + "entries/<int:entry_id>/", entries.entry_detail, name="entry"),
    path(A + "history/<str:month>/", entries.history_month, name="history"),
    path(A + "learnings/", learnings.learning_list, name="learnings"),
    path(A + "learnings/<int:learning_id>/edit/", learnings.learning_edit, name="learning_edit"),
    path(A + "errors/<int:error_id>/edit/", learnings.error_edit, name="error_edit"),
    path(A + "errors/<int:error_id>/extend/", learnings.error_extend, name="error_extend"),
    path(A + "errors/<int:error_id>/expire/", learnings.error_expire, name="error_expire"),
    path(A + "runs/", runs.run_list, name="runs"),
    path(A + "runs/<int:run_id>/", runs.run_detail, name="run"),
    path(A + "runs/<int:run_id>/retry/", runs.run_retry, name="run_retry"),
    path(A + "users/", users.user_list, name="users"),
    path(A + "users/<str:user>/", users.user_detail, name="user"),
    path(A + "users/<str:user>/erase/", user_erase.user_erase_confirm, name="user_erase"),
]
