"""Judging pages."""

from django.urls import path

from judging import views
from judging.adjudication import views as views_adjudication
from judging.guidelines import views as views_guidelines
from judging.lists import views as views_lists
from judging.llm import views as views_llm
from judging.quality import views as views_quality

app_name = "judging"
urlpatterns = [
    path("", views.home, name="home"),
    path("c/<slug:slug>/", views.collection_detail, name="collection_detail"),
    path("c/<slug:slug>/agreement/", views.collection_agreement, name="collection_agreement"),
    path("c/<slug:slug>/judges/", views_quality.judge_list, name="judge_list"),
    path("c/<slug:slug>/gold/", views_quality.gold_list, name="gold_list"),
    path(
        "c/<slug:slug>/llm-judges/<int:pk>/canaries/",
        views_quality.canary_check_create,
        name="canary_check_create",
    ),
    path(
        "c/<slug:slug>/llm-judges/<int:pk>/versions/",
        views_quality.version_list,
        name="version_list",
    ),
    path(
        "c/<slug:slug>/canary-checks/<int:pk>/",
        views_quality.canary_check_detail,
        name="canary_check_detail",
    ),
    path(
        "c/<slug:slug>/version-checks/<int:pk>/",
        views_quality.version_check_detail,
        name="version_check_detail",
    ),
    path("c/<slug:slug>/gold/<int:pk>/delete/", views_quality.gold_delete, name="gold_delete"),
    path(
        "c/<slug:slug>/guidelines/",
        views_guidelines.guidelines_versions,
        name="guidelines_versions",
    ),
    path("c/<slug:slug>/judge/", views.judge_next, name="judge_next"),
    path("c/<slug:slug>/judge/undo/", views.judge_undo, name="judge_undo"),
    path("c/<slug:slug>/judge/<int:entry_id>/", views.judge_pair, name="judge_pair"),
    path("c/<slug:slug>/judgments/", views.judgment_list, name="judgment_list"),
    path("c/<slug:slug>/judgments/<int:pk>/edit/", views.judgment_update, name="judgment_update"),
    path(
        "c/<slug:slug>/pairs/<int:query_id>/<int:document_id>/history/",
        views.judgment_history,
        name="judgment_history",
    ),
    path("c/<slug:slug>/pairs/add/", views.pool_entry_create, name="poolentry_create"),
    path("c/<slug:slug>/documents/import/", views.document_import, name="document_import"),
    path("c/<slug:slug>/llm-jobs/", views_llm.llm_job_create, name="llmjob_create"),
    path("c/<slug:slug>/llm-jobs/<int:pk>/", views_llm.llm_job_detail, name="llmjob_detail"),
    path(
        "c/<slug:slug>/llm-jobs/<int:pk>/failures/",
        views_llm.llm_job_failures,
        name="llmfailure_list",
    ),
    path(
        "c/<slug:slug>/llm-jobs/<int:pk>/outputs/",
        views_llm.llm_job_outputs,
        name="llmoutput_list",
    ),
    path(
        "c/<slug:slug>/llm-judges/<int:pk>/edit/",
        views_llm.llm_judge_update,
        name="judge_update",
    ),
    path("c/<slug:slug>/llm-judges/new/", views_llm.llm_judge_create, name="judge_create"),
    path("c/<slug:slug>/llm-judges/<int:pk>/try/", views_llm.llm_judge_try, name="judge_try"),
    path(
        "c/<slug:slug>/disagreements/",
        views_adjudication.disagreement_list,
        name="disagreement_list",
    ),
    path(
        "c/<slug:slug>/pairs/<int:query_id>/<int:document_id>/",
        views_adjudication.pair_adjudicate,
        name="pair_adjudicate",
    ),
    path(
        "c/<slug:slug>/judges/<int:judge_id>/remove-labels/",
        views_adjudication.judge_labels_remove,
        name="judge_labels_remove",
    ),
]
urlpatterns += [
    path("new/", views_lists.collection_create, name="collection_create"),
    path("c/<slug:slug>/import/", views_lists.collection_import, name="collection_import"),
    path(
        "c/<slug:slug>/imports/<int:pk>/",
        views_lists.file_import_detail,
        name="file_import_detail",
    ),
    path(
        "c/<slug:slug>/imports/<int:pk>/retry/",
        views_lists.file_import_retry,
        name="file_import_retry",
    ),
    path(
        "c/<slug:slug>/judgment-list/",
        views_lists.judgment_list_download,
        name="judgment_list_download",
    ),
]
