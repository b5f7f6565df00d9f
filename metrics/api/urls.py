"""Metrics API routes (mounted at ``/api/v1/``)."""

from django.urls import path

from metrics.analysis import api as analysis_api
from metrics.answers import api as answers_api
from metrics.api import settings as settings_api
from metrics.api import teams as teams_api
from metrics.api import views
from metrics.pool import api as pool_api
from metrics.schedules import api as schedules_api
from metrics.search import api as search_api
from metrics.visibility import api as visibility_api

app_name = "metrics-api"
urlpatterns = [
    path(
        "collections/<slug:slug>/answer-runs/",
        answers_api.AnswerRunListCreateView.as_view(),
        name="answer-run-list",
    ),
    path(
        "collections/<slug:slug>/answer-runs/<int:pk>/",
        answers_api.AnswerRunDetailView.as_view(),
        name="answer-run-detail",
    ),
    path("collections/<slug:slug>/runs/", views.RunListCreateView.as_view(), name="run-list"),
    path(
        "collections/<slug:slug>/runs/<int:pk>/",
        views.RunDetailView.as_view(),
        name="run-detail",
    ),
    path(
        "collections/<slug:slug>/runs/<int:pk>/scores/",
        views.RunScoresView.as_view(),
        name="run-scores",
    ),
    path(
        "collections/<slug:slug>/runs/<int:pk>/queries/<str:qid>/",
        analysis_api.RunQueryView.as_view(),
        name="run-query",
    ),
    path(
        "collections/<slug:slug>/compare/",
        analysis_api.RunCompareView.as_view(),
        name="compare",
    ),
    path(
        "collections/<slug:slug>/compare/pairs/",
        analysis_api.RunPairsView.as_view(),
        name="compare-pairs",
    ),
    path(
        "collections/<slug:slug>/leaderboard/",
        views.LeaderboardView.as_view(),
        name="leaderboard",
    ),
    path("collections/<slug:slug>/teams/", views.TeamListCreateView.as_view(), name="team-list"),
    path(
        "collections/<slug:slug>/teams/<int:pk>/",
        teams_api.TeamDetailView.as_view(),
        name="team-detail",
    ),
    path(
        "collections/<slug:slug>/settings/",
        settings_api.CollectionSettingsView.as_view(),
        name="collection-settings",
    ),
    path(
        "collections/<slug:slug>/pooling/",
        pool_api.PoolingSettingsView.as_view(),
        name="pooling",
    ),
    path(
        "collections/<slug:slug>/score-visibility/",
        visibility_api.ScoreVisibilityView.as_view(),
        name="score-visibility",
    ),
    path(
        "collections/<slug:slug>/pooling/plan/",
        pool_api.PoolPlanView.as_view(),
        name="pooling-plan",
    ),
    path(
        "collections/<slug:slug>/pooling/stability/",
        pool_api.StabilityView.as_view(),
        name="pooling-stability",
    ),
    path(
        "collections/<slug:slug>/difficulty/",
        analysis_api.DifficultyView.as_view(),
        name="difficulty",
    ),
    path(
        "collections/<slug:slug>/agreement/llm/",
        analysis_api.LlmAgreementView.as_view(),
        name="llm-agreement",
    ),
    path(
        "collections/<slug:slug>/search-endpoints/",
        search_api.EndpointListView.as_view(),
        name="search-endpoint-list",
    ),
    path(
        "collections/<slug:slug>/search-configurations/",
        search_api.ConfigurationListView.as_view(),
        name="search-configuration-list",
    ),
    path(
        "collections/<slug:slug>/search-configurations/<int:pk>/",
        search_api.ConfigurationDetailView.as_view(),
        name="search-configuration-detail",
    ),
    path(
        "collections/<slug:slug>/search-configurations/<int:pk>/versions/",
        search_api.VersionCreateView.as_view(),
        name="search-configuration-versions",
    ),
    path(
        "collections/<slug:slug>/search-configurations/<int:pk>/tries/",
        search_api.TryView.as_view(),
        name="search-configuration-tries",
    ),
    path(
        "collections/<slug:slug>/search-snapshots/",
        search_api.SnapshotListView.as_view(),
        name="search-snapshot-list",
    ),
    path(
        "collections/<slug:slug>/search-diffs/",
        search_api.SnapshotDiffView.as_view(),
        name="search-diff",
    ),
    path(
        "collections/<slug:slug>/search-snapshots/<int:pk>/",
        search_api.SnapshotDetailView.as_view(),
        name="search-snapshot-detail",
    ),
    path(
        "collections/<slug:slug>/search-configurations/<int:pk>/schedule/",
        schedules_api.ScheduleView.as_view(),
        name="search-configuration-schedule",
    ),
    path(
        "collections/<slug:slug>/search-checks/",
        schedules_api.CheckListView.as_view(),
        name="search-check-list",
    ),
]
