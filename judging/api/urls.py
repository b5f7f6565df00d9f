"""Judging API routes (mounted at ``/api/v1/``)."""

from django.urls import path

from judging.adjudication import api as views_adjudication
from judging.agreement import api as views_agreement
from judging.api import views
from judging.guidelines import api as views_guidelines
from judging.imports import api as views_imports
from judging.lists import api as views_lists
from judging.llm import api as views_llm
from judging.quality import api as views_quality

app_name = "judging-api"
urlpatterns = [
    path("collections/", views_lists.CollectionListCreateView.as_view(), name="collection-list"),
    path(
        "collections/<slug:slug>/",
        views.CollectionDetailView.as_view(),
        name="collection-detail",
    ),
    path(
        "collections/<slug:slug>/queries/",
        views_lists.QueryListCreateView.as_view(),
        name="query-list",
    ),
    path(
        "collections/<slug:slug>/documents/",
        views_lists.DocumentListCreateView.as_view(),
        name="document-list",
    ),
    path("collections/<slug:slug>/pool/", views.PoolListView.as_view(), name="pool-list"),
    path(
        "collections/<slug:slug>/judgments/",
        views.JudgmentListCreateView.as_view(),
        name="judgment-list",
    ),
    path(
        "collections/<slug:slug>/judgments/<int:pk>/",
        views.JudgmentDetailView.as_view(),
        name="judgment-detail",
    ),
    path(
        "collections/<slug:slug>/judgments/<int:pk>/history/",
        views.JudgmentHistoryView.as_view(),
        name="judgment-history",
    ),
    path("collections/<slug:slug>/events/", views.EventListView.as_view(), name="event-list"),
    path("collections/<slug:slug>/qrels/", views_lists.JudgmentListView.as_view(), name="qrels"),
    path(
        "collections/<slug:slug>/imports/",
        views_imports.FileImportCreateView.as_view(),
        name="file-import-list",
    ),
    path(
        "collections/<slug:slug>/imports/<int:pk>/",
        views_imports.FileImportDetailView.as_view(),
        name="file-import-detail",
    ),
    path(
        "collections/<slug:slug>/imports/<int:pk>/retry/",
        views_imports.FileImportRetryView.as_view(),
        name="file-import-retry",
    ),
    path(
        "collections/<slug:slug>/gold/",
        views_quality.GoldPairListView.as_view(),
        name="gold-pair-list",
    ),
    path(
        "collections/<slug:slug>/gold/rate/",
        views_quality.GoldRateView.as_view(),
        name="gold-rate",
    ),
    path(
        "collections/<slug:slug>/gold/qualification/",
        views_quality.QualificationView.as_view(),
        name="gold-qualification",
    ),
    path(
        "collections/<slug:slug>/gold/qualification/preview/",
        views_quality.QualificationPreviewView.as_view(),
        name="gold-qualification-preview",
    ),
    path(
        "collections/<slug:slug>/gold/qualification/changes/",
        views_quality.QualificationChangeListView.as_view(),
        name="gold-qualification-changes",
    ),
    path(
        "collections/<slug:slug>/gold/<int:pk>/",
        views_quality.GoldPairDetailView.as_view(),
        name="gold-pair-detail",
    ),
    path(
        "collections/<slug:slug>/judges/gold/",
        views_quality.JudgeGoldView.as_view(),
        name="judge-gold",
    ),
    path(
        "collections/<slug:slug>/judges/canaries/",
        views_quality.CanaryRatesView.as_view(),
        name="canary-rates",
    ),
    path(
        "collections/<slug:slug>/judges/<int:judge_id>/canary-checks/",
        views_quality.CanaryCheckCreateView.as_view(),
        name="canary-check-list",
    ),
    path(
        "collections/<slug:slug>/judges/<int:judge_id>/canary-checks/<int:pk>/",
        views_quality.CanaryCheckDetailView.as_view(),
        name="canary-check-detail",
    ),
    path(
        "collections/<slug:slug>/judges/<int:judge_id>/versions/",
        views_quality.VersionCheckListView.as_view(),
        name="version-check-list",
    ),
    path(
        "collections/<slug:slug>/judges/<int:judge_id>/versions/<int:pk>/",
        views_quality.VersionCheckDetailView.as_view(),
        name="version-check-detail",
    ),
    path(
        "collections/<slug:slug>/judges/attention/",
        views_quality.JudgeAttentionView.as_view(),
        name="judge-attention",
    ),
    path(
        "collections/<slug:slug>/guidelines/",
        views_guidelines.GuidelinesView.as_view(),
        name="guidelines",
    ),
    path(
        "collections/<slug:slug>/guidelines/versions/",
        views_guidelines.GuidelineVersionListView.as_view(),
        name="guideline-version-list",
    ),
    path(
        "collections/<slug:slug>/agreement/",
        views_agreement.AgreementView.as_view(),
        name="agreement",
    ),
    path(
        "collections/<slug:slug>/llm-jobs/",
        views_llm.LLMJobListCreateView.as_view(),
        name="llm-job-list",
    ),
    path(
        "collections/<slug:slug>/llm-jobs/<int:pk>/",
        views_llm.LLMJobDetailView.as_view(),
        name="llm-job-detail",
    ),
    path(
        "collections/<slug:slug>/llm-jobs/<int:pk>/failures/",
        views_llm.LLMJobFailureListView.as_view(),
        name="llm-job-failures",
    ),
    path(
        "collections/<slug:slug>/llm-jobs/<int:pk>/outputs/",
        views_llm.LLMJobOutputListView.as_view(),
        name="llm-job-outputs",
    ),
    path(
        "collections/<slug:slug>/disagreements/",
        views_adjudication.DisagreementListView.as_view(),
        name="disagreement-list",
    ),
    path("collections/<slug:slug>/pair/", views_adjudication.PairDetailView.as_view(), name="pair"),
    path(
        "collections/<slug:slug>/adjudications/",
        views_adjudication.AdjudicationListCreateView.as_view(),
        name="adjudication-list",
    ),
    path(
        "collections/<slug:slug>/adjudications/<int:pk>/",
        views_adjudication.AdjudicationDetailView.as_view(),
        name="adjudication-detail",
    ),
    path(
        "collections/<slug:slug>/aggregation/",
        views_adjudication.AggregationSettingsView.as_view(),
        name="aggregation",
    ),
    path(
        "collections/<slug:slug>/agreement/judges/",
        views_adjudication.JudgeAgreementView.as_view(),
        name="agreement-judges",
    ),
    path(
        "collections/<slug:slug>/judges/<int:judge_id>/judgments/",
        views_adjudication.JudgeLabelsView.as_view(),
        name="judge-labels",
    ),
    path(
        "collections/<slug:slug>/judges/<int:judge_id>/quota/",
        views_adjudication.JudgeQuotaView.as_view(),
        name="judge-quota",
    ),
    path(
        "collections/<slug:slug>/memberships/",
        views.MembershipListCreateView.as_view(),
        name="membership-list",
    ),
    path(
        "collections/<slug:slug>/memberships/<int:pk>/",
        views.MembershipDetailView.as_view(),
        name="membership-detail",
    ),
    path("judges/", views.JudgeListCreateView.as_view(), name="judge-list"),
    path("llm-providers/", views_llm.LLMProviderListView.as_view(), name="llm-provider-list"),
    path("judges/<int:pk>/", views.JudgeDetailView.as_view(), name="judge-detail"),
]
