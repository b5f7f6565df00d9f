"""Serializers of the judging API: what each endpoint accepts and renders."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import QuotaErrorSerializer
from graded import textpolicy
from judging import evidence
from judging import selectors as judging_selectors
from judging.api import selectors
from judging.imports.models import STATES as FILE_IMPORT_STATES
from judging.llm import judges as services_judges
from judging.llm import selectors as selectors_llm
from judging.models import (
    GRADE_MAX,
    GRADE_MIN,
    Collection,
    Document,
    FileImport,
    Judge,
    Judgment,
    JudgmentEvent,
    LLMProvider,
    Membership,
    PoolEntry,
    Query,
)
from judging.quality import selectors as quality_selectors

# --- collections, queries, documents, pool ---------------------------------------------


class CollectionSerializer(serializers.ModelSerializer):
    """A collection the user takes part in, with the user's roles in it."""

    roles = serializers.ListField(
        child=serializers.ChoiceField(choices=Membership.Role.choices),
        read_only=True,
        help_text="The requesting user's roles in the collection.",
    )

    class Meta:
        model = Collection
        fields = [
            "slug",
            "name",
            "purpose",
            "guidelines",
            "grade_names",
            "judges_per_pair",
            "judgments_version",
            "judgments_changed_at",
            "roles",
        ]
        read_only_fields = fields

    def build_field(self, field_name: str, info: Any, model_class: Any, nested_depth: int):
        """Document ``grade_names`` as five strings rather than free JSON."""
        if field_name == "grade_names":
            return serializers.ListField, {
                "child": serializers.CharField(),
                "read_only": True,
                "help_text": "Names of grades 0 to 4, in order.",
            }
        return super().build_field(field_name, info, model_class, nested_depth)


#: The version whose responses drop the deprecated ``external_id`` aliases (docs/api.md).
ALIAS_REMOVED_IN = "v2"


@extend_schema_field({"type": "string", "readOnly": True, "deprecated": True})
class DeprecatedAliasField(serializers.CharField):
    """The old ``external_id`` output field, marked deprecated in the OpenAPI schema."""


def deprecated_alias(of: str) -> serializers.CharField:
    """Return the old ``external_id`` output field, an alias of ``of``."""
    return DeprecatedAliasField(
        read_only=True,
        help_text=f"Deprecated alias of `{of}`, removed in API {ALIAS_REMOVED_IN}; read `{of}`.",
    )


class QuerySerializer(serializers.ModelSerializer):
    """A query with what judges (human or LLM) read to decide relevance."""

    qid = serializers.CharField(
        source="external_id", read_only=True, help_text="Query id, as in runs and qrels."
    )
    external_id = deprecated_alias("qid")

    class Meta:
        model = Query
        fields = ["qid", "external_id", "text", "description", "narrative"]
        read_only_fields = fields


class DocumentSerializer(serializers.ModelSerializer):
    """A document; `body` is untrusted text or HTML."""

    docno = serializers.CharField(
        source="external_id", read_only=True, help_text="Document id, as in runs and qrels."
    )
    external_id = deprecated_alias("docno")
    url = serializers.CharField(
        read_only=True,
        help_text="Source address (http or https), or the empty string when there is none.",
    )

    class Meta:
        model = Document
        fields = ["docno", "external_id", "title", "body", "url", "extra", "has_content"]
        read_only_fields = fields


class PoolEntrySerializer(serializers.ModelSerializer):
    """A pooled (query, document) pair and how many judges graded it.

    Give ``context={"coordinator": False}`` for a viewer who is not a coordinator: the
    count of other judges' grades is then null (:meth:`get_graded_count`).
    """

    id = serializers.SerializerMethodField(
        help_text="The pair's opaque id (the judging card's address carries it): stable and "
        "the same for everyone, but not in any order: it says nothing about when or with "
        "which pairs the pair entered the pool."
    )
    query = serializers.SlugRelatedField(slug_field="external_id", read_only=True)
    document = serializers.SlugRelatedField(slug_field="external_id", read_only=True)
    graded_count = serializers.SerializerMethodField(
        help_text="Judges who graded the pair: coordinators only (null for judges, who see "
        "whether a pair still needs their grade through `needs_grades`)."
    )
    source = serializers.ChoiceField(
        choices=PoolEntry.Source.choices,
        read_only=True,
        help_text="How the pair entered the pool: with a run's pairs, an import's, or a "
        "coordinator's. A gold pair not pooled when marked enters with the next of these "
        "and takes its source.",
    )
    added_at = serializers.DateTimeField(
        read_only=True,
        help_text="When the pair entered the pool: one time for all the pairs pooled together.",
    )

    class Meta:
        model = PoolEntry
        fields = ["id", "query", "document", "graded_count", "source", "added_at"]
        read_only_fields = fields

    def get_id(self, entry: PoolEntry) -> int:
        """Return the entry's opaque id (:func:`judging.selectors.pair_ref`)."""
        return judging_selectors.pair_ref(entry.pk)

    def get_graded_count(self, entry: PoolEntry) -> int | None:
        """Return how many judges graded the pair, for coordinators only.

        A gold pair is served to every judge, so its count can pass the collection's
        judges per pair, which no ordinary pair's does: judges get null.
        """
        return entry.graded_count if self.context.get("coordinator", True) else None


# --- memberships -------------------------------------------------------------------------

#: Roles the memberships endpoint grants and changes; the team role follows teams.
MEMBERSHIP_ROLES = [
    (value, label) for value, label in Membership.Role.choices if value != Membership.Role.TEAM
]


class MembershipSerializer(serializers.ModelSerializer):
    """A role one user holds in the collection."""

    user = serializers.SlugRelatedField(
        slug_field="username", read_only=True, help_text="The member's username."
    )

    class Meta:
        model = Membership
        fields = ["id", "user", "role", "quota", "created_at"]
        read_only_fields = fields


class MembershipCreateSerializer(serializers.Serializer):
    """Give a user a role in the collection."""

    user = serializers.CharField(
        min_length=1, max_length=150, help_text="Username of an existing, active user."
    )
    role = serializers.ChoiceField(
        choices=MEMBERSHIP_ROLES,
        help_text="coordinator, judge or adjudicator. The team role comes with team "
        "membership (`.../teams/`).",
    )
    quota = serializers.IntegerField(
        min_value=0,
        required=False,
        allow_null=True,
        default=None,
        help_text="Judge role only: most pairs this judge grades here (empty: no limit).",
    )


class MembershipUpdateSerializer(serializers.Serializer):
    """Change a membership: its role, or a judge's quota."""

    role = serializers.ChoiceField(choices=MEMBERSHIP_ROLES, required=False)
    quota = serializers.IntegerField(
        min_value=0,
        required=False,
        allow_null=True,
        help_text="Judge role only: most pairs this judge grades here (null: no limit).",
    )


# --- judges ------------------------------------------------------------------------------


class JudgeSummarySerializer(serializers.ModelSerializer):
    """Who gave a judgment."""

    class Meta:
        model = Judge
        fields = ["id", "name", "kind"]
        read_only_fields = fields


class CoordinatedCollectionsField(serializers.SlugRelatedField):
    """A collection slug among those the requesting user coordinates."""

    def get_queryset(self) -> Any:
        """Return the collections the requesting user coordinates."""
        request = self.context.get("request")
        if request is None:
            return Collection.objects.none()
        return selectors.coordinated_collections(user=request.user)


class UsableProviderField(serializers.SlugRelatedField):
    """An LLM provider's name among those open to the requesting user (issue 32 item 9)."""

    def get_queryset(self) -> Any:
        """Return the providers the requesting user may choose."""
        request = self.context.get("request")
        if request is None:
            return LLMProvider.objects.none()
        return selectors_llm.providers_for(user=request.user)


class JudgeSerializer(serializers.ModelSerializer):
    """A judge; registering one creates an LLM judge (human judges come with their users).

    The serializer reads the request's shapes; what makes a configuration acceptable is
    checked by :func:`judging.llm.judges.llm_judge_create`, as on the page.
    """

    collections = CoordinatedCollectionsField(
        many=True,
        slug_field="slug",
        required=False,
        help_text="Slugs of the collections an LLM judge works for (collections you "
        "coordinate; default: all of them). Only collections you belong to are listed.",
    )

    llm_provider = UsableProviderField(
        slug_field="name",
        required=False,
        allow_null=True,
        error_messages={
            "does_not_exist": "No provider has that name among those open to you; "
            "GET /api/v1/llm-providers/ lists them."
        },
        help_text="Name of the provider (registered by the operator) Graded sends this "
        "judge's requests to; it sets the URL and the key. `GET /api/v1/llm-providers/` "
        "lists them. It must be open to each collection the judge works for.",
    )
    version = serializers.SerializerMethodField(
        help_text="LLM judges: the version of the configuration (`v-` and a digest of the "
        "model, model version, provider, prompt, system prompt, answer pattern, JSON mode, "
        "scale, mapping and decoding; not the name, retries or timeout). A change of any of "
        "those makes a new version: each label records the version that gave it "
        "(`judge_version` of a judgment). Null for human judges."
    )

    class Meta:
        model = Judge
        fields = [
            "id",
            "kind",
            "name",
            "collections",
            "provider",
            "model",
            "model_version",
            "prompt_template",
            "prompt_version",
            "decoding",
            "native_scale",
            "scale_mapping",
            "llm_provider",
            "system_prompt",
            "answer_pattern",
            "json_mode",
            "max_attempts",
            "timeout_seconds",
            "version",
            "created_at",
        ]
        read_only_fields = ["id", "kind", "version", "created_at"]
        extra_kwargs = {
            "model": {"allow_blank": False, "required": True},
            "max_attempts": {
                "min_value": services_judges.MAX_ATTEMPTS[0],
                "max_value": services_judges.MAX_ATTEMPTS[1],
            },
            "timeout_seconds": {
                "min_value": services_judges.TIMEOUT_SECONDS[0],
                "max_value": services_judges.TIMEOUT_SECONDS[1],
            },
            "name": {"min_length": 1},
        }

    def build_field(self, field_name: str, info: Any, model_class: Any, nested_depth: int):
        """Type the JSON fields precisely so clients and the schema know their shapes."""
        if field_name == "decoding":
            return serializers.DictField, {
                "required": False,
                "help_text": "Decoding parameters (temperature, top_p, ...).",
            }
        if field_name == "native_scale":
            return serializers.ListField, {
                "child": serializers.CharField(),
                "required": False,
                "help_text": "Labels of the LLM's own scale, if not 0–4.",
            }
        if field_name == "scale_mapping":
            return serializers.DictField, {
                "child": serializers.IntegerField(min_value=GRADE_MIN, max_value=GRADE_MAX),
                "required": False,
                "help_text": "Grade 0–4 of each native label.",
            }
        return super().build_field(field_name, info, model_class, nested_depth)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_version(self, judge: Judge) -> str | None:
        """Return the LLM judge's configuration version; None for a human judge."""
        if judge.kind != Judge.Kind.LLM:
            return None
        return services_judges.judge_version(judge)

    def to_representation(self, instance: Judge) -> dict[str, Any]:
        """Return the judge, listing only the collections the requesting user belongs to."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is not None and not request.user.is_superuser:
            if not hasattr(self, "_member_of"):
                self._member_of = set(
                    Collection.objects.filter(memberships__user=request.user).values_list(
                        "slug", flat=True
                    )
                )
            data["collections"] = [c for c in data["collections"] if c in self._member_of]
        return data


# --- judgments ---------------------------------------------------------------------------


class EvidenceSpanSerializer(serializers.Serializer):
    """One evidence span: a passage of the document's text (judging.evidence)."""

    start = serializers.IntegerField(
        min_value=0, help_text="Offset of the first character, in Unicode code points."
    )
    end = serializers.IntegerField(
        min_value=1, help_text="Offset after the last character (exclusive), in code points."
    )
    text = serializers.CharField(
        help_text="The passage: exactly the document's evidence text from start to end."
    )


EVIDENCE_HELP = (
    "Evidence spans: passages of the document's text (its body as judges read it, tags "
    "removed; offsets in Unicode code points, end exclusive) that support the grade, each "
    "checked against the document; overlapping or touching spans are merged. Left out: "
    "the label's spans stay; `[]` or null removes them. When the collection requires "
    "evidence, a human judge's grade from its `evidence_from_grade` on needs at least one."
)


@extend_schema_field(EvidenceSpanSerializer(many=True, allow_null=True))
class EvidenceField(serializers.JSONField):
    """Evidence spans given with a label; their shape is checked here, the text by the service."""

    def __init__(self, **kwargs: Any) -> None:
        """Make the field optional and nullable, with the shared help text."""
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("help_text", EVIDENCE_HELP)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[dict[str, Any]]:
        """Return the spans as dicts; a bad shape is a 400 naming the span."""
        try:
            spans = evidence.spans_from_value(data)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict["evidence"]) from None
        return [span.as_dict() for span in spans or ()]


class JudgmentSerializer(serializers.ModelSerializer):
    """A judge's current label of one (query, document) pair."""

    judge = JudgeSummarySerializer(read_only=True)
    query = serializers.SlugRelatedField(
        slug_field="external_id", read_only=True, help_text="The pair's qid."
    )
    document = serializers.SlugRelatedField(
        slug_field="external_id", read_only=True, help_text="The pair's docno."
    )
    qid = serializers.CharField(source="query.external_id", read_only=True)
    docno = serializers.CharField(source="document.external_id", read_only=True)
    provenance = serializers.SerializerMethodField(
        help_text="How the current label was recorded: the channel of its latest history "
        "event (browser, api, import, admin, system, llm, adjudication)."
    )
    note = serializers.CharField(
        read_only=True,
        help_text="The judge's note; for an LLM judge, its explanation of the grade.",
    )
    evidence = serializers.SerializerMethodField(
        help_text="Evidence spans (`[]` when none): passages of the document's text, offsets "
        "in Unicode code points, end exclusive, in document order."
    )
    guidelines_version = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="The collection's guidelines version the label was last written under "
        "(`GET .../guidelines/versions/`); null for labels written before versions were kept.",
    )
    judge_version = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="LLM labels: the version of the judge's configuration that last wrote the "
        "label (`v-…`, the judge's `version` then); null for human labels.",
    )
    counted = serializers.SerializerMethodField(
        help_text="Whether the label's judge counts in the live judgment list. False while "
        "the collection asks for qualification and the judge has not qualified (or fell "
        "below the bar): the label is kept, but not aggregated (not counted yet: "
        "qualifying). Judges see their own standing as of the last time the pairs they "
        "judged reached a new multiple of 20, so that it never points at a gold pair."
    )

    class Meta:
        model = Judgment
        fields = [
            "id",
            "judge",
            "query",
            "document",
            "qid",
            "docno",
            "grade",
            "status",
            "note",
            "evidence",
            "seconds",
            "abstain_probability",
            "provenance",
            "guidelines_version",
            "judge_version",
            "counted",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_counted(self, judgment: Judgment) -> bool:
        """Return whether the judge's labels count (one read per response, kept in context).

        Coordinators read the standing in force; anyone else (a judge reads their own
        labels) the standing the judge is told (:func:`judging.quality.selectors.
        counted_as_told`). Without a view in the context the viewer counts as a judge.
        """
        view = self.context.get("view")
        coordinator = bool(getattr(view, "is_coordinator", False))
        known = self.context.setdefault("counted_judges", {})
        key = (judgment.collection_id, coordinator)
        if key not in known:
            read = (
                quality_selectors.counted_judges
                if coordinator
                else quality_selectors.counted_as_told
            )
            known[key] = read(collection_id=judgment.collection_id)
        counted = known[key]
        return counted is None or judgment.judge_id in counted

    @extend_schema_field(
        serializers.ChoiceField(choices=JudgmentEvent.Channel.choices, allow_null=True)
    )
    def get_provenance(self, judgment: Judgment) -> str | None:
        """Return the channel of the judgment's latest event (the selector annotates it)."""
        return getattr(judgment, "provenance", None)

    @extend_schema_field(EvidenceSpanSerializer(many=True))
    def get_evidence(self, judgment: Judgment) -> list[dict[str, Any]]:
        """Return the judgment's evidence spans, ``[]`` when none."""
        return judgment.evidence or []


class JudgmentLabelSerializer(serializers.Serializer):
    """The label fields a history event records before and after a change."""

    grade = serializers.IntegerField(allow_null=True, required=False)
    status = serializers.ChoiceField(
        choices=[*Judgment.Status.choices, ("adjudicated", "Adjudicated")],
        required=False,
        help_text="`adjudicated` in the events of an adjudication (channel `adjudication`).",
    )
    reason = serializers.CharField(
        required=False, help_text="An adjudication's reason (adjudication events only)."
    )
    note = serializers.CharField(
        required=False, allow_blank=True, max_length=textpolicy.MAX_NOTE_LENGTH
    )
    seconds = serializers.FloatField(allow_null=True, required=False)
    abstain_probability = serializers.FloatField(allow_null=True, required=False)
    evidence = EvidenceSpanSerializer(
        many=True,
        required=False,
        help_text="The label's evidence spans; left out when it had none.",
    )
    guidelines_version = serializers.IntegerField(
        required=False,
        help_text="In `after`: the guidelines version the label was written under.",
    )
    judge_version = serializers.CharField(
        required=False,
        help_text="In `after`, for an LLM judge: the version of its configuration that wrote "
        "the label.",
    )


class JudgmentEventSerializer(serializers.ModelSerializer):
    """One append-only history entry."""

    judge = JudgeSummarySerializer(
        read_only=True, allow_null=True, help_text="Null for an adjudication (channel)."
    )
    query = serializers.SlugRelatedField(slug_field="external_id", read_only=True)
    document = serializers.SlugRelatedField(slug_field="external_id", read_only=True)
    actor = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Username of who made the change; empty for system changes.",
    )
    before = JudgmentLabelSerializer(read_only=True, allow_null=True)
    after = JudgmentLabelSerializer(read_only=True, allow_null=True)

    class Meta:
        model = JudgmentEvent
        fields = [
            "id",
            "judgment",
            "judge",
            "query",
            "document",
            "action",
            "channel",
            "actor",
            "before",
            "after",
            "at",
        ]
        read_only_fields = fields


class JudgmentItemSerializer(serializers.Serializer):
    """One judgment to record, naming its pair by external ids.

    ``qid`` and ``docno`` are accepted for ``query`` and ``document``
    (:mod:`judging.api.names` renames them before this serializer reads the item); they are
    declared so that the schema, and the body-field check, know them.
    """

    query = serializers.CharField(
        min_length=1, max_length=textpolicy.MAX_ID_LENGTH, help_text="Query external id (qid)."
    )
    document = serializers.CharField(
        min_length=1,
        max_length=textpolicy.MAX_ID_LENGTH,
        help_text="Document external id (docno).",
    )
    qid = serializers.CharField(
        write_only=True,
        required=False,
        help_text="Another spelling of `query`; giving both with different ids is a 400.",
    )
    docno = serializers.CharField(
        write_only=True,
        required=False,
        help_text="Another spelling of `document`; giving both with different ids is a 400.",
    )
    grade = serializers.IntegerField(
        min_value=GRADE_MIN,
        max_value=GRADE_MAX,
        allow_null=True,
        required=False,
        default=None,
        help_text="0 not relevant … 4 perfect; required when status is graded, else empty.",
    )
    status = serializers.ChoiceField(
        choices=Judgment.Status.choices, default=Judgment.Status.GRADED
    )
    note = serializers.CharField(
        allow_blank=True,
        required=False,
        default="",
        trim_whitespace=False,
        max_length=textpolicy.MAX_NOTE_LENGTH,
    )
    seconds = serializers.FloatField(
        min_value=0, allow_null=True, required=False, default=None, help_text="Time spent."
    )
    abstain_probability = serializers.FloatField(
        min_value=0, max_value=1, allow_null=True, required=False, default=None
    )
    evidence = EvidenceField()
    raw_output = serializers.CharField(
        allow_blank=True,
        required=False,
        default="",
        trim_whitespace=False,
        max_length=200_000,
        help_text="LLM judges: the model's answer as given; kept beside the judgment. For an "
        "LLM judge with a native scale, `grade` is a label of that scale, mapped onto 0–4.",
    )


class JudgmentCreateSerializer(JudgmentItemSerializer):
    """One judgment to record, optionally as another judge (an LLM judge, by coordinators)."""

    judge = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Judge id to record as; empty for the caller's own human judge.",
    )


@extend_schema_field(JudgmentItemSerializer(many=True))
class JudgmentItemsField(serializers.ListField):
    """The judgments of a batch; each item is checked on import, with its 1-based index."""

    child = serializers.JSONField()


class JudgmentBatchSerializer(serializers.Serializer):
    """Many judgments of one judge, recorded all or nothing."""

    judge = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Judge id to record as; empty for the caller's own human judge.",
    )
    judgments = JudgmentItemsField(allow_empty=False)


class JudgmentFileSerializer(serializers.Serializer):
    """A TREC qrels file (``qid iter docno grade``) or JSON Lines file (``*.jsonl``)."""

    file = serializers.FileField(
        help_text="qrels text, one `qid iter docno grade` per line (grades 0–4), or, for "
        "a name ending in .jsonl, one JSON object per line with qid, docno, grade and "
        "optionally status, note, seconds, abstain_probability."
    )
    judge = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Judge id to record as; empty for the caller's own human judge.",
    )


class JudgmentUpdateSerializer(serializers.Serializer):
    """Changes to a judgment; fields left out keep their values."""

    grade = serializers.IntegerField(
        min_value=GRADE_MIN,
        max_value=GRADE_MAX,
        allow_null=True,
        required=False,
        help_text="Setting a grade alone also sets the status to graded.",
    )
    status = serializers.ChoiceField(
        choices=Judgment.Status.choices,
        required=False,
        help_text="Setting cannot_judge or later alone also clears the grade.",
    )
    note = serializers.CharField(
        allow_blank=True,
        required=False,
        trim_whitespace=False,
        max_length=textpolicy.MAX_NOTE_LENGTH,
    )
    seconds = serializers.FloatField(min_value=0, allow_null=True, required=False)
    abstain_probability = serializers.FloatField(
        min_value=0, max_value=1, allow_null=True, required=False
    )
    evidence = EvidenceField()


class ImportSummarySerializer(serializers.Serializer):
    """What a batch or file import changed, and the judgment-list version after it."""

    created = serializers.IntegerField()
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    version = serializers.IntegerField()


# --- qrels -------------------------------------------------------------------------------


class LiveGradeSerializer(serializers.Serializer):
    """One pair of the live judgment list."""

    qid = serializers.CharField()
    docno = serializers.CharField()
    grade = serializers.FloatField(help_text="Aggregated grade, 0–4 (fractional possible).")
    humans = serializers.IntegerField(help_text="Human grades behind the live grade.")
    llms = serializers.IntegerField(help_text="LLM grades behind the live grade.")


class QrelsLineSerializer(serializers.Serializer):
    """One judge's graded label of a pair, as exported in qrels."""

    qid = serializers.CharField()
    docno = serializers.CharField()
    grade = serializers.IntegerField()


# --- background imports -------------------------------------------------------------------


class ImportErrorSerializer(serializers.Serializer):
    """One refused line (or item, or field) of a background import."""

    message = serializers.CharField()
    line = serializers.IntegerField(required=False, help_text="The file's line, 1-based.")
    item = serializers.IntegerField(required=False, help_text="A JSON array's item, 1-based.")
    field = serializers.CharField(required=False)
    part = serializers.CharField(required=False, help_text="Which file (topics, ...).")
    file = serializers.CharField(required=False, help_text="Its name.")
    code = serializers.CharField(
        required=False, help_text="`quota_reached`: the judge's quota refused the import."
    )
    quota = QuotaErrorSerializer(
        required=False, help_text="With `quota_reached`: the quota's size, judged and left."
    )


class FileImportSerializer(serializers.ModelSerializer):
    """A background import: status, progress and outcome."""

    status = serializers.ChoiceField(
        source="state",
        choices=FILE_IMPORT_STATES,
        read_only=True,
        help_text="queued, running, done, refused or failed; or interrupted: running, but its "
        "worker has not said it is alive for GRADED_IMPORT_STALE_SECONDS (killed or lost). "
        "Nothing of an interrupted import was written; a coordinator may retry it "
        "(POST .../retry/).",
    )
    heartbeat_at = serializers.SerializerMethodField(
        help_text="When the worker last said it is alive (null before a worker took it)."
    )
    attempts = serializers.IntegerField(
        read_only=True, help_text="How many times a worker has started the import."
    )
    bytes_read = serializers.SerializerMethodField(
        help_text="Bytes of the files read so far (all of them once finished)."
    )
    errors = ImportErrorSerializer(
        many=True,
        read_only=True,
        help_text="Once refused: every refused line (the first 100, then a count), as a "
        "400 would list them; nothing was written.",
    )
    result = serializers.DictField(
        read_only=True,
        help_text="Once done, for a judgment file posted to .../judgments/ or .../qrels/: "
        "the body the request would have answered (created, changed, unchanged, version, "
        "judge, and for .../qrels/ judges and dry_run).",
    )

    class Meta:
        model = FileImport
        fields = [
            "id",
            "kind",
            "status",
            "files",
            "bytes_total",
            "bytes_read",
            "report",
            "problems",
            "errors",
            "result",
            "created_at",
            "started_at",
            "heartbeat_at",
            "attempts",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field({"type": "string", "format": "date-time", "nullable": True})
    def get_heartbeat_at(self, job: FileImport) -> str | None:
        """Return the worker's last sign of life (the row's or the cache's, the later)."""
        running = job.status == FileImport.Status.RUNNING
        last = job.last_heartbeat() if running else job.heartbeat_at
        return None if last is None else serializers.DateTimeField().to_representation(last)

    def get_bytes_read(self, job: FileImport) -> int:
        """Return the progress the view looked up (see the selector)."""
        return int(self.context.get("bytes_read", job.bytes_read))
