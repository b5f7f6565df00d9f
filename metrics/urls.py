"""Metrics pages: leaderboard, runs, comparisons and topic difficulty of a collection."""

from django.urls import path

from metrics import views
from metrics.analysis import views as analysis_views
from metrics.pool import views as views_pool
from metrics.schedules import views as views_schedules
from metrics.search import views as views_search

app_name = "metrics"
urlpatterns = [
    path("c/<slug:slug>/leaderboard/", views.run_leaderboard, name="leaderboard"),
    path("c/<slug:slug>/runs/new/", views.run_create, name="run_create"),
    path("c/<slug:slug>/runs/<int:pk>/", views.run_detail, name="run_detail"),
    path(
        "c/<slug:slug>/runs/<int:pk>/queries/<int:query_pk>/",
        analysis_views.run_query,
        name="run_query",
    ),
    path("c/<slug:slug>/runs/<int:pk>/file/", views.run_file, name="run_file"),
    path("c/<slug:slug>/compare/", views.run_compare, name="compare"),
    path("c/<slug:slug>/difficulty/", views.query_difficulty, name="difficulty"),
    path("c/<slug:slug>/pool/", views_pool.pool_list, name="pool"),
    path("c/<slug:slug>/stability/", views_pool.stability_detail, name="stability"),
    path("c/<slug:slug>/settings/", views.collection_update, name="collection_update"),
    path(
        "c/<slug:slug>/agreement/llm/",
        analysis_views.judge_compare,
        name="llm_agreement",
    ),
    path("c/<slug:slug>/search/", views_search.configuration_list, name="search"),
    path(
        "c/<slug:slug>/search/<int:pk>/",
        views_search.configuration_detail,
        name="search_configuration",
    ),
    path(
        "c/<slug:slug>/search/<int:pk>/schedule/",
        views_schedules.schedule_update,
        name="search_schedule",
    ),
    path("c/<slug:slug>/search/alerts/", views_schedules.alert_list, name="search_alerts"),
    path(
        "c/<slug:slug>/search/diff/",
        views_search.snapshot_diff,
        name="search_diff",
    ),
    path(
        "c/<slug:slug>/search/snapshots/<int:pk>/",
        views_search.snapshot_detail,
        name="search_snapshot",
    ),
]
