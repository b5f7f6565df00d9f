"""Judge quality over REST: attention signals, gold pairs and accuracy against gold."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from config.pagination import page_parameters
from judging.api.permissions import COORDINATORS
from judging.api.views import SLUG, CollectionScopedView, CollectionSettingView
from judging.models import Document, Judge, Query
from judging.quality import selectors, services
from judging.quality.models import (
    CanaryCheck,
    CanaryResult,
    GoldPair,
    QualificationChange,
    QualityCheck,
    VersionCheck,
)

FLAGS = ["fast", "slow", "runs", "straight", "cannot_judge", "later"]


def _number(value: float) -> float | None:
    """Return ``value``, or None for NaN (JSON has no NaN)."""
    return None if math.isnan(value) else value


def _figures(figures: Any) -> dict[str, Any]:
    """Return a dataclass of figures as JSON: NaN as null, tuples of tuples as lists.

    A nested dataclass of figures (straight-lining's) becomes a nested object.
    """
    return {
        name: _number(value)
        if isinstance(value, float)
        else [list(item) for item in value]
        if name == "confusion"
        else _figures(value)
        if hasattr(value, "__dataclass_fields__")
        else value
        for name, value in figures.__dict__.items()
    }


def _judge_rows(rows: Any, figures: str, **extra: str) -> list[dict[str, Any]]:
    """Return selector rows (judge id, name, kind and a dataclass of figures) as JSON."""
    return [
        {
            "judge_id": row.judge_id,
            "name": row.name,
            "kind": row.kind,
            **_figures(getattr(row, figures)),
            **{name: getattr(row, attribute) for name, attribute in extra.items()},
        }
        for row in rows
    ]


class StraightLiningSerializer(serializers.Serializer):
    """One judge's grades against the others' grades of the same queries."""

    compared = serializers.IntegerField(
        help_text="The judge's graded labels of queries the others gave 3 grades or more."
    )
    mode_grade = serializers.IntegerField(
        allow_null=True, help_text="The judge's commonest grade among them."
    )
    mode_share = serializers.FloatField(allow_null=True, help_text="Its share.")
    expected_mode_share = serializers.FloatField(
        allow_null=True,
        help_text="The share the others' grades of the same queries give that grade.",
    )
    z = serializers.FloatField(allow_null=True, help_text="One-sided z of the difference.")
    entropy = serializers.FloatField(
        allow_null=True, help_text="Entropy of the judge's grades (bits; 0: one grade)."
    )
    expected_entropy = serializers.FloatField(
        allow_null=True, help_text="Entropy of the others' grades of the same queries."
    )
    run_grade = serializers.IntegerField(
        allow_null=True, help_text="Grade of the judge's least probable run of one grade."
    )
    run_length = serializers.IntegerField(help_text="Its length in labels.")
    run_log10_chance = serializers.FloatField(
        allow_null=True,
        help_text="log10 of its chance under the others' grades of its labels' queries.",
    )
    run_median_seconds = serializers.FloatField(
        allow_null=True, help_text="Median seconds per label within that run."
    )
    median_seconds = serializers.FloatField(
        allow_null=True, help_text="Median seconds per label over the compared labels."
    )
    flagged = serializers.BooleanField()


class AttentionSerializer(serializers.Serializer):
    """One judge's attention signals; null where there was too little to compute them."""

    judge_id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=Judge.Kind.choices)
    labels = serializers.IntegerField(help_text="Labels of every status.")
    timed = serializers.IntegerField(help_text="Labels with a recorded time.")
    median_seconds = serializers.FloatField(allow_null=True)
    q1_seconds = serializers.FloatField(allow_null=True)
    q3_seconds = serializers.FloatField(allow_null=True)
    others_low_seconds = serializers.FloatField(
        allow_null=True, help_text="Lower end of the other judges' usual time (Tukey, log scale)."
    )
    others_high_seconds = serializers.FloatField(allow_null=True)
    graded = serializers.IntegerField()
    repeat_share = serializers.FloatField(
        allow_null=True, help_text="Share of grades equal to the judge's previous grade."
    )
    chance_repeat_share = serializers.FloatField(
        allow_null=True, help_text="The same share by chance, from the judge's own grades."
    )
    runs_z = serializers.FloatField(allow_null=True)
    longest_run = serializers.IntegerField()
    cannot_judge_share = serializers.FloatField(allow_null=True)
    others_cannot_judge_share = serializers.FloatField(allow_null=True)
    cannot_judge_z = serializers.FloatField(allow_null=True)
    later_share = serializers.FloatField(allow_null=True)
    others_later_share = serializers.FloatField(allow_null=True)
    later_z = serializers.FloatField(allow_null=True)
    straight = StraightLiningSerializer(
        allow_null=True,
        help_text="Straight-lining: the judge's grades against the other judges' grades of "
        "the same queries (docs/judges.md).",
    )
    flags = serializers.ListField(child=serializers.ChoiceField(choices=FLAGS))


@extend_schema_view(
    get=extend_schema(
        summary="List judges' attention signals",
        description="Coordinators only. Per judge: seconds per label against the other "
        "judges' usual range, runs of one grade against chance, straight-lining (one grade "
        "where the others' grades of the same queries vary, with the judge's speed), "
        "shares of can't judge and later against the others'. Flagged judges come first; "
        "nobody is dropped. The rules are in docs/judges.md.",
        parameters=[SLUG, *page_parameters()],
        responses={200: AttentionSerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class JudgeAttentionView(CollectionScopedView):
    """Attention signals of a collection's judges."""

    serializer_class = AttentionSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return one page of judges."""
        rows = _judge_rows(selectors.judge_attention(collection=self.collection), "signals")
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(AttentionSerializer(page, many=True).data)


# --- gold pairs -------------------------------------------------------------------------------


class GoldPairSerializer(serializers.ModelSerializer):
    """A gold pair: the query and document ids, the expected grade and why."""

    qid = serializers.CharField(source="query.external_id", max_length=500)
    docno = serializers.CharField(source="document.external_id", max_length=500)
    grade = serializers.IntegerField(min_value=0, max_value=4)
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    pool_now = serializers.BooleanField(
        write_only=True,
        required=False,
        default=False,
        help_text="False (default): a pair not pooled yet waits and enters the pool with the "
        "next pairs pooled, with their source and time, so judges cannot tell it. True: it "
        "enters at once, alone (a judge watching the pool could notice it).",
    )
    pooled = serializers.SerializerMethodField(
        help_text="Whether the pair is in the pool yet; false while it waits for the next "
        "pairs pooled."
    )

    class Meta:
        model = GoldPair
        fields = [
            "id",
            "qid",
            "docno",
            "grade",
            "reason",
            "pool_now",
            "pooled",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "pooled", "created_at", "updated_at"]

    def get_pooled(self, gold: GoldPair) -> bool:
        """Return whether the pair is pooled (annotated by the list, else read)."""
        pooled = getattr(gold, "pooled", None)
        return selectors.gold_is_pooled(gold=gold) if pooled is None else bool(pooled)


class GoldAccuracySerializer(serializers.Serializer):
    """One judge's accuracy against gold; null where undefined."""

    judge_id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=Judge.Kind.choices)
    n = serializers.IntegerField(help_text="Gold pairs the judge graded.")
    exact = serializers.FloatField(allow_null=True)
    within_one = serializers.FloatField(allow_null=True)
    kappa_quadratic = serializers.FloatField(allow_null=True)
    kappa_reason = serializers.CharField(allow_null=True)
    mean_signed_deviation = serializers.FloatField(
        allow_null=True, help_text="Mean of judge − gold; positive: the judge grades higher."
    )
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="5 × 5 counts: rows the gold grade, columns the judge's grade.",
    )
    last_n = serializers.IntegerField(help_text="Gold pairs in the trend (the most recent).")
    last_exact = serializers.FloatField(allow_null=True)
    alert = serializers.BooleanField(
        help_text="Without qualification: the trend's exact share is below the collection's "
        "alert threshold. With qualification: the judge is below the bar (`qualification` "
        "is `below`), so their labels do not count."
    )
    qualification = serializers.ChoiceField(
        choices=["qualifying", "qualified", "below", "not_assessed"],
        allow_null=True,
        help_text="The judge's standing when the collection asks for qualification (null "
        "when it does not): `qualifying` (fewer gold pairs than asked), `qualified` "
        "(labels count), `below` (enough gold pairs, too few of the last ones exact), "
        "`not_assessed` (an imported judge, never served gold pairs, with fewer than "
        "asked: labels count).",
    )
    counted = serializers.BooleanField(
        help_text="Whether the judge's labels count in the live list (always true without "
        "qualification). Labels that do not count are kept, and listed."
    )
    window = serializers.IntegerField(
        help_text="Gold pairs the qualification rule looks at (the judge's most recent)."
    )
    window_exact = serializers.IntegerField(help_text="Of those, graded exactly as gold.")
    lost_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When a judge who had counted stopped counting (while they still do not).",
    )


@extend_schema_view(
    get=extend_schema(
        summary="List gold pairs",
        description="Coordinators only (judges never learn which pairs are gold).",
        parameters=[SLUG, *page_parameters()],
        responses={200: GoldPairSerializer(many=True), **error_responses(401, 403, 404)},
    ),
    post=extend_schema(
        summary="Mark a pair as gold (or change its grade)",
        parameters=[SLUG],
        request=GoldPairSerializer,
        responses={
            201: GoldPairSerializer,
            200: GoldPairSerializer,
            **error_responses(400, 401, 403, 404),
        },
    ),
)
class GoldPairListView(CollectionScopedView):
    """The gold pairs of a collection."""

    serializer_class = GoldPairSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "POST": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return one page of gold pairs."""
        page = self.paginate_queryset(selectors.gold_pairs(collection=self.collection))
        return self.get_paginated_response(GoldPairSerializer(page, many=True).data)

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Mark the pair as gold; 201 when new, 200 when its grade or reason changed."""
        given = GoldPairSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        collection = self.collection
        problems = {}
        query = Query.objects.filter(
            collection=collection, external_id=data["query"]["external_id"]
        ).first()
        if query is None:
            problems["qid"] = ["No query of this id in the collection."]
        document = Document.objects.filter(
            collection=collection, external_id=data["document"]["external_id"]
        ).first()
        if document is None:
            problems["docno"] = ["No document of this id in the collection."]
        if problems:
            raise ValidationError(problems)
        existed = GoldPair.objects.filter(query=query, document=document).exists()
        gold = services.gold_set(
            query=query,
            document=document,
            grade=data["grade"],
            reason=data["reason"],
            actor=request.user,
            pool_now=data["pool_now"],
        )
        return Response(GoldPairSerializer(gold).data, status=200 if existed else 201)


@extend_schema_view(
    delete=extend_schema(
        summary="Unmark a gold pair",
        description="Coordinators only. Judges' labels of the pair stay.",
        parameters=[SLUG],
        responses={204: None, **error_responses(401, 403, 404)},
    )
)
class GoldPairDetailView(CollectionScopedView):
    """One gold pair."""

    serializer_class = GoldPairSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"DELETE": COORDINATORS}

    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Unmark the pair."""
        gold = get_object_or_404(GoldPair, pk=self.kwargs["pk"], collection=self.collection)
        services.gold_remove(gold=gold)
        return Response(status=204)


@extend_schema_view(
    get=extend_schema(
        summary="List judges' accuracy against gold pairs",
        description="Coordinators only. Human and LLM judges who graded a gold pair (with "
        "qualification on, every judge with a label): exact and within-one agreement, "
        "quadratic κ, mean signed deviation, confusion matrix, the trend over their last "
        "gold pairs, their qualification standing and whether their labels count, and an "
        "alert (below the qualification bar; without qualification, the trend below the "
        "collection's agreement alert threshold). Judges with an alert come first.",
        parameters=[SLUG, *page_parameters()],
        responses={200: GoldAccuracySerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class JudgeGoldView(CollectionScopedView):
    """Judges' accuracy against the collection's gold pairs."""

    serializer_class = GoldAccuracySerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return one page of judges."""
        rows = _judge_rows(
            selectors.gold_report(collection=self.collection),
            "accuracy",
            alert="alert",
            qualification="standing",
            counted="counted",
            window="window",
            window_exact="window_exact",
            lost_at="lost_at",
        )
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(GoldAccuracySerializer(page, many=True).data)


class GoldRateSerializer(serializers.Serializer):
    """The share of served pairs that are gold pairs a judge has not graded."""

    gold_rate = serializers.FloatField(
        min_value=0, max_value=1, help_text="0 to 1; 0 turns blind mixing off."
    )


@extend_schema_view(
    get=extend_schema(
        summary="Show the gold mixing rate",
        parameters=[SLUG],
        responses={200: GoldRateSerializer, **error_responses(401, 403, 404)},
    ),
    put=extend_schema(
        summary="Set the gold mixing rate",
        description="Coordinators only. Each judge is served the gold pairs they have not "
        "graded at this rate, blind.",
        parameters=[SLUG],
        request=GoldRateSerializer,
        responses={200: GoldRateSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class GoldRateView(CollectionSettingView):
    """How often gold pairs are mixed into judges' queues."""

    serializer_class = GoldRateSerializer
    write_method = "put"
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "PUT": COORDINATORS}

    def current(self) -> dict[str, Any]:
        """Return the rate."""
        return {"gold_rate": self.collection.gold_rate}

    def change(self, data: dict[str, Any]) -> None:
        """Set the rate."""
        services.gold_rate_set(collection=self.collection, rate=data["gold_rate"])


class BarEffectSerializer(serializers.Serializer):
    """What a qualification bar does (or would do) to the labels and the judgment list."""

    qualification_pairs = serializers.IntegerField()
    qualification_share = serializers.FloatField()
    gold_pairs = serializers.IntegerField(help_text="Gold pairs the collection has.")
    judges = serializers.IntegerField(help_text="Judges with graded labels.")
    judges_left_out = serializers.IntegerField(
        help_text="Of those, the judges whose labels would not count."
    )
    standings = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Judges by standing under the bar: qualified, qualifying, below, "
        "not_assessed (`counted` with the bar off).",
    )
    labels = serializers.IntegerField(help_text="Graded labels.")
    labels_left_out = serializers.IntegerField(help_text="Of those, the labels left out.")
    lines_now = serializers.IntegerField(help_text="Lines of the judgment list now.")
    lines_after = serializers.IntegerField(
        help_text="Lines it would have under the bar (same aggregation, adjudications kept)."
    )
    needs_confirm = serializers.BooleanField(
        help_text="The bar keeps less than half of the lines, or no judge: it is set only "
        "with `confirm: true`."
    )
    reason = serializers.CharField(help_text="Why it needs confirming, with the counts.")
    warnings = serializers.ListField(child=serializers.CharField())


class QualificationSerializer(serializers.Serializer):
    """The qualification bar: labels count only after enough gold pairs graded exactly."""

    qualification_pairs = serializers.IntegerField(
        min_value=0,
        max_value=services.MAX_QUALIFICATION_PAIRS,
        help_text="Gold pairs a judge must have graded before their labels count; 0 turns "
        "qualification off (every judge counts).",
    )
    qualification_share = serializers.FloatField(
        min_value=0,
        max_value=1,
        help_text="Share of the judge's most recent gold pairs (as many as "
        "`qualification_pairs`) graded exactly as gold, to qualify and to stay qualified.",
    )
    effect = BarEffectSerializer(
        read_only=True,
        help_text="What the bar does: judges and labels left out, the judgment list's lines. "
        "After a change, `lines_now` is the count before it and `lines_after` the count now.",
    )


class QualificationBodySerializer(QualificationSerializer):
    """A new qualification bar, and the confirmation a bar that drops most labels needs."""

    confirm = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Set a bar that keeps less than half of the judgment list's lines, or no "
        "judge (see `effect.needs_confirm` in the preview).",
    )


def _effect(effect: Any) -> dict[str, Any]:
    """Return a :class:`judging.quality.selectors.BarEffect` as JSON."""
    return {**effect.__dict__, "warnings": list(effect.warnings)}


@extend_schema_view(
    get=extend_schema(
        summary="Show the qualification bar",
        description="Coordinators only. The bar and what it does (`effect`).",
        parameters=[SLUG],
        responses={200: QualificationSerializer, **error_responses(401, 403, 404)},
    ),
    put=extend_schema(
        summary="Set the qualification bar",
        description="Coordinators only. A judge's labels then count in the live list only "
        "while their last `qualification_pairs` gold pairs are at least "
        "`qualification_share` exact; the others' labels are kept but not aggregated. A "
        "changed bar rebuilds the live list (a new judgment-list version) and rescores "
        "every run in the background. A bar that keeps less than half of the judgment "
        "list's lines, or no judge, is a 400 on `confirm` giving the counts, unless the body "
        "has `confirm: true`; preview any bar first with `GET .../qualification/preview/`. "
        "The answer's `effect` has the counts before and after. The rule is in "
        "docs/judges.md.",
        parameters=[SLUG],
        request=QualificationBodySerializer,
        responses={200: QualificationSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class QualificationView(CollectionSettingView):
    """The collection's qualification bar."""

    serializer_class = QualificationSerializer
    body_serializer_class = QualificationBodySerializer
    write_method = "put"
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "PUT": COORDINATORS}
    _before: Any = None

    def current(self) -> dict[str, Any]:
        """Return the bar and its effect (after a change: the counts before and after)."""
        collection = self.collection
        pairs, share = collection.qualification_pairs, collection.qualification_share
        effect = selectors.bar_effect(collection=collection, pairs=pairs, share=share)
        if self._before is not None:  # the change just made: lines before, and now
            effect = replace(self._before, lines_after=effect.lines_now)
        return {
            "qualification_pairs": pairs,
            "qualification_share": share,
            "effect": _effect(effect),
        }

    def change(self, data: dict[str, Any]) -> None:
        """Set the bar (a changed bar rebuilds the live list; a drastic one needs confirm)."""
        self._before = selectors.bar_effect(
            collection=self.collection,
            pairs=data["qualification_pairs"],
            share=data["qualification_share"],
        )
        services.qualification_set(
            collection=self.collection,
            pairs=data["qualification_pairs"],
            share=data["qualification_share"],
            confirm=data["confirm"],
        )


class QualificationPreviewQuerySerializer(serializers.Serializer):
    """The bar to preview (query string)."""

    qualification_pairs = serializers.IntegerField(
        min_value=0, max_value=services.MAX_QUALIFICATION_PAIRS
    )
    qualification_share = serializers.FloatField(min_value=0, max_value=1)


@extend_schema_view(
    get=extend_schema(
        summary="Preview a qualification bar",
        description="Coordinators only. What the bar given in the query string would do, "
        "without setting it: the judges and labels it would leave out, the judgment list's "
        "lines now and under it, whether setting it needs `confirm: true`, and warnings "
        "(e.g. fewer gold pairs than the bar asks). Nothing is written.",
        parameters=[
            SLUG,
            OpenApiParameter("qualification_pairs", int, required=True),
            OpenApiParameter("qualification_share", float, required=True),
        ],
        responses={200: BarEffectSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class QualificationPreviewView(CollectionScopedView):
    """What a qualification bar would do, before it is set."""

    serializer_class = BarEffectSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the bar's effect."""
        params = QualificationPreviewQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        effect = selectors.bar_effect(
            collection=self.collection,
            pairs=params.validated_data["qualification_pairs"],
            share=params.validated_data["qualification_share"],
        )
        return Response(BarEffectSerializer(_effect(effect)).data)


class QualificationChangeSerializer(serializers.ModelSerializer):
    """A judge started or stopped counting in the live list."""

    judge = serializers.IntegerField(source="judge_id", read_only=True)
    judge_name = serializers.CharField(source="judge.name", read_only=True)

    class Meta:
        model = QualificationChange
        fields = [
            "judge",
            "judge_name",
            "counted",
            "status",
            "graded",
            "window",
            "window_exact",
            "needed",
            "share",
            "at",
        ]
        read_only_fields = fields


JUDGE_FILTER = OpenApiParameter(
    "judge", int, description="Only this judge's changes (its id).", required=False
)


@extend_schema_view(
    get=extend_schema(
        summary="List when judges started or stopped counting",
        description="Coordinators only. The qualification history, newest first: each time "
        "a judge's labels started or stopped counting in the live list, with the judge's "
        "gold record then and the bar in force (`needed` pairs at `share` exact).",
        parameters=[SLUG, JUDGE_FILTER, *page_parameters()],
        responses={
            200: QualificationChangeSerializer(many=True),
            **error_responses(400, 401, 403, 404),
        },
    )
)
class QualificationChangeListView(CollectionScopedView):
    """The collection's qualification history."""

    serializer_class = QualificationChangeSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return one page of changes, newest first."""
        judge = request.query_params.get("judge")
        if judge is not None and not (judge.isascii() and judge.isdigit() and len(judge) < 12):
            raise serializers.ValidationError({"judge": ["A judge's id: a whole number."]})
        changes = selectors.qualification_changes(
            collection=self.collection, judge_id=None if judge is None else int(judge)
        )
        page = self.paginate_queryset(changes)
        return self.get_paginated_response(QualificationChangeSerializer(page, many=True).data)


# --- canary checks --------------------------------------------------------------------------


class CanaryResultSerializer(serializers.ModelSerializer):
    """One canary and what the judge answered."""

    failed = serializers.BooleanField(help_text="Graded above 0 (the right grade is 0).")

    class Meta:
        model = CanaryResult
        fields = ["kind", "qid", "title", "text", "grade", "raw_answer", "problem", "failed"]


#: The fields every check of an LLM judge shows (judging.quality.models.QualityCheck).
CHECK_FIELDS = [
    "id",
    "url",
    "judge_id",
    "version",
    "status",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "created_at",
    "started_at",
    "finished_at",
]


class _CheckSerializer(serializers.ModelSerializer):
    """What a check of an LLM judge shows while it is queued, runs, and once it ended."""

    judge_id = serializers.IntegerField(read_only=True)
    url = serializers.SerializerMethodField(help_text="Where to follow the check (GET).")
    status = serializers.ChoiceField(
        choices=QualityCheck.Status.choices,
        read_only=True,
        help_text="queued, running, done or failed; results once done.",
    )
    error = serializers.CharField(
        read_only=True, help_text="Why the check failed (empty unless failed)."
    )
    route: ClassVar[str] = ""

    def get_url(self, check: QualityCheck) -> str:
        """Return the check's absolute URL."""
        path = reverse(
            f"judging-api:{self.route}",
            kwargs={"slug": check.collection.slug, "judge_id": check.judge_id, "pk": check.pk},
        )
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class CanaryCheckSerializer(_CheckSerializer):
    """A canary check: its state, and every canary with the answer once it is done."""

    route = "canary-check-detail"
    results = serializers.SerializerMethodField()

    class Meta:
        model = CanaryCheck
        fields = [*CHECK_FIELDS, "seed", "queries", "results"]
        read_only_fields = fields

    @extend_schema_field(CanaryResultSerializer(many=True))
    def get_results(self, check: CanaryCheck) -> list[dict[str, Any]]:
        """Return every canary and its answer once the check is done (else none)."""
        if check.status != QualityCheck.Status.DONE:
            return []
        return CanaryResultSerializer(check.results.all(), many=True).data


class CanaryRatesSerializer(serializers.Serializer):
    """Canary failures of one LLM judge version."""

    judge_id = serializers.IntegerField()
    name = serializers.CharField()
    version = serializers.CharField()
    checks = serializers.IntegerField()
    last_check_id = serializers.IntegerField()
    stuffing = serializers.IntegerField(help_text="Stuffing canaries graded.")
    stuffing_failed = serializers.IntegerField()
    stuffing_rate = serializers.FloatField(allow_null=True)
    injection = serializers.IntegerField(help_text="Injection canaries graded.")
    injection_failed = serializers.IntegerField()
    injection_rate = serializers.FloatField(allow_null=True)
    unreadable = serializers.IntegerField()


def _llm_judge(view: CollectionScopedView) -> Judge:
    """Return the URL's LLM judge of the view's collection (404 otherwise)."""
    return get_object_or_404(
        Judge, pk=view.kwargs["judge_id"], kind=Judge.Kind.LLM, collections=view.collection
    )


def _accepted(serializer: _CheckSerializer) -> Response:
    """Return 202 with the check's state and its URL (also in ``Location``)."""
    data = serializer.data
    return Response(data, status=202, headers={"Location": data["url"]})


@extend_schema_view(
    post=extend_schema(
        summary="Start a canary check of an LLM judge",
        description="Coordinators only. Queues a check that sends two canaries (keyword "
        "stuffing, instruction injection; right grade 0) for each of the collection's "
        "first five queries to the judge in the background, and answers 202 at once with "
        "the check's `url` and `status` (queued). Follow `url` until `status` is done "
        "(the answers are in `results`) or failed (`error` says why: a refused key, model "
        "or destination stops the check after a few requests). Canaries never reach the "
        "pool, the judgment list or scores.",
        parameters=[SLUG],
        request=None,
        responses={202: CanaryCheckSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class CanaryCheckCreateView(CollectionScopedView):
    """Canary checks of one LLM judge."""

    serializer_class = CanaryCheckSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"POST": COORDINATORS}

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Queue the check."""
        check = services.canary_check_start(
            collection=self.collection, judge=_llm_judge(self), user=request.user
        )
        return _accepted(CanaryCheckSerializer(check, context={"request": request}))


class _CheckDetailView(CollectionScopedView):
    """One check of an LLM judge (``queryset`` names the kind), for coordinators."""

    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the check."""
        check = get_object_or_404(
            self.queryset,
            pk=self.kwargs["pk"],
            judge=_llm_judge(self),
            collection=self.collection,
        )
        return Response(self.serializer_class(check, context={"request": request}).data)


@extend_schema_view(
    get=extend_schema(
        summary="Show a canary check of an LLM judge",
        description="Coordinators only. The check's status (queued, running, done, "
        "failed), why it failed, and every canary with the judge's answer once done.",
        parameters=[SLUG],
        responses={200: CanaryCheckSerializer, **error_responses(401, 403, 404)},
    )
)
class CanaryCheckDetailView(_CheckDetailView):
    """One canary check."""

    serializer_class = CanaryCheckSerializer
    queryset = CanaryCheck.objects.select_related("collection")


@extend_schema_view(
    get=extend_schema(
        summary="List LLM judge versions' canary failure rates",
        parameters=[SLUG, *page_parameters()],
        responses={200: CanaryRatesSerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class CanaryRatesView(CollectionScopedView):
    """Canary failure rates per LLM judge version."""

    serializer_class = CanaryRatesSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return one page of versions."""
        rows = selectors.canary_rates(collection=self.collection)
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(CanaryRatesSerializer(page, many=True).data)


# --- LLM judge versions ---------------------------------------------------------------------


class AccuracySerializer(serializers.Serializer):
    """Agreement of a version's grades with reference grades."""

    n = serializers.IntegerField(help_text="Pairs with both grades.")
    exact = serializers.FloatField(allow_null=True)
    kappa_quadratic = serializers.FloatField(allow_null=True)
    kappa_reason = serializers.CharField(allow_null=True)
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Rows: the reference grade; columns: the version's grade.",
    )


class VersionRowSerializer(serializers.Serializer):
    """One version check beside the previous version's."""

    check_id = serializers.IntegerField()
    version = serializers.CharField()
    created_at = serializers.DateTimeField()
    pairs = serializers.IntegerField()
    unreadable = serializers.IntegerField()
    vs_humans = AccuracySerializer()
    vs_gold = AccuracySerializer()
    kappa_previous = serializers.FloatField(allow_null=True)
    previous_version = serializers.CharField(allow_null=True)
    mean_tokens = serializers.FloatField(allow_null=True)
    median_latency_ms = serializers.FloatField(allow_null=True)
    flagged = serializers.BooleanField(
        help_text="κ against humans dropped by more than the margin since the previous version."
    )


class VersionCheckSerializer(_CheckSerializer):
    """A version check: its state, and its row of the versions table once it is done."""

    route = "version-check-detail"
    row = serializers.SerializerMethodField(
        help_text="The check beside the previous version's (null until done)."
    )

    class Meta:
        model = VersionCheck
        fields = [*CHECK_FIELDS, "row"]
        read_only_fields = fields

    @extend_schema_field(VersionRowSerializer(allow_null=True))
    def get_row(self, check: VersionCheck) -> dict[str, Any] | None:
        """Return the check's row of :func:`selectors.version_report` once done (else null)."""
        row = selectors.version_row(check=check)
        return None if row is None else VersionRowSerializer(_version_row(row)).data


def _version_row(row: Any) -> dict[str, Any]:
    """Return a version report row as JSON-ready figures."""
    return {**row.__dict__, "vs_humans": _figures(row.vs_humans), "vs_gold": _figures(row.vs_gold)}


@extend_schema_view(
    get=extend_schema(
        summary="List an LLM judge's version checks",
        description="Coordinators only. Newest first, each compared with humans, gold and "
        "the version checked before it.",
        parameters=[SLUG, *page_parameters()],
        responses={200: VersionRowSerializer(many=True), **error_responses(401, 403, 404)},
    ),
    post=extend_schema(
        summary="Start a check of the judge's current version on gold and the frozen sample",
        description="Coordinators only. Queues a check in which the judge's current "
        "configuration grades the gold pairs and the collection's frozen sample of "
        "human-graded pairs (labelling nothing), and answers 202 at once with the check's "
        "`url` and `status` (queued). Follow `url` until `status` is done (its `row` "
        "compares it with humans, gold and the previous version) or failed (`error`).",
        parameters=[SLUG],
        request=None,
        responses={202: VersionCheckSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class VersionCheckListView(CollectionScopedView):
    """Version checks of one LLM judge."""

    serializer_class = VersionRowSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "POST": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return one page of done checks."""
        rows = selectors.version_report(collection=self.collection, judge=_llm_judge(self))
        page = self.paginate_queryset([_version_row(row) for row in rows])
        return self.get_paginated_response(VersionRowSerializer(page, many=True).data)

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Queue a check."""
        check = services.version_check_start(
            collection=self.collection, judge=_llm_judge(self), user=request.user
        )
        return _accepted(VersionCheckSerializer(check, context={"request": request}))


@extend_schema_view(
    get=extend_schema(
        summary="Show a version check of an LLM judge",
        operation_id="collections_judges_version_check_retrieve",
        description="Coordinators only. The check's status (queued, running, done, "
        "failed), why it failed, and its row of the versions table once done.",
        parameters=[SLUG],
        responses={200: VersionCheckSerializer, **error_responses(401, 403, 404)},
    )
)
class VersionCheckDetailView(_CheckDetailView):
    """One version check."""

    serializer_class = VersionCheckSerializer
    queryset = VersionCheck.objects.select_related("collection", "judge")
