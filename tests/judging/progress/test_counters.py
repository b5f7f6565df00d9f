"""The maintained progress counters always equal a recount by the definition.

Random sequences of every write that can move them — judging, re-grading, undo,
deletion, bulk imports, pool additions (of pairs judged already), content arriving for
id-only documents, settings changes (judges per pair, the disagreement rule),
adjudication, removal of a judge's labels, deletion of queries and documents — are
applied through the services; after each step the counters (``PoolEntry.is_open``,
``PoolProgress``, ``JudgeProgress``) must equal the anti-join recount of
:mod:`judging.progress.selectors`, and the judging card's fast ``previous_entry_id``
must equal its first definition.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging import selectors, services, services_undo
from judging.adjudication import services as services_adjudication
from judging.models import (
    Adjudication,
    Document,
    JudgeProgress,
    Judgment,
    JudgmentEvent,
    PoolEntry,
    PoolProgress,
    Query,
)
from judging.progress import counters as progress
from judging.progress import selectors as selectors_progress
from judging.progress import services as services_progress
from tests import factories

pytestmark = pytest.mark.django_db
Status = Judgment.Status


class World:
    """A small collection whose state a random sequence of service calls changes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.coll = factories.collection(
            "seq", judges_per_pair=2, max_judges_per_pair=rng.choice([0, 3, 4])
        )
        self.queries = [factories.query(self.coll, f"q{i}") for i in range(3)]
        self.docs = [factories.document(self.coll, f"d{i}") for i in range(5)]
        self.docs += [
            factories.document(self.coll, f"x{i}", has_content=False) for i in range(2)
        ]  # id-only: pooled but never judgeable until their content arrives
        self.users = [factories.user(f"j{i}") for i in range(4)]
        self.judges = [factories.human_judge(u) for u in self.users]
        self.judges.append(factories.llm_judge("llm"))
        self.admin = factories.user("cora")
        self.next_id = 0
        pairs = [(q.pk, d.pk) for q in self.queries for d in self.docs]
        rng.shuffle(pairs)
        services.pool_add_ids(collection=self.coll, pairs=pairs[:8], source="manual")

    def pair(self) -> tuple[Query, Document]:
        """Return a random pair (pooled or not) of live queries and documents."""
        queries = list(Query.objects.filter(collection=self.coll))
        docs = list(Document.objects.filter(collection=self.coll))
        return self.rng.choice(queries), self.rng.choice(docs)

    def label(self) -> dict:
        """Return a random label."""
        status = self.rng.choice([Status.GRADED] * 4 + [Status.CANNOT_JUDGE, Status.LATER])
        grade = self.rng.randint(0, 4) if status == Status.GRADED else None
        return {"status": status, "grade": grade}

    # --- the steps ------------------------------------------------------------------

    def judge(self) -> None:
        q, d = self.pair()
        judge = self.rng.choice(self.judges)
        services.judgment_record(judge=judge, query=q, document=d, **self.label())

    def regrade(self) -> None:
        judgment = Judgment.objects.filter(collection=self.coll).order_by("?").first()
        if judgment is not None:
            services.judgment_record(
                judge=judgment.judge, query=judgment.query, document=judgment.document,
                **self.label(),
            )  # fmt: skip

    def undo(self) -> None:
        user = self.rng.choice(self.users)
        services_undo.judgment_undo_last(judge=user.judge, collection=self.coll, actor=user)

    def delete(self) -> None:
        judgment = Judgment.objects.filter(collection=self.coll).order_by("?").first()
        if judgment is not None:
            services.judgment_delete(judgment=judgment)

    def bulk_import(self) -> None:
        judge = self.rng.choice(self.judges)
        seen = set()
        rows = []
        for line in range(1, self.rng.randint(1, 6) + 1):
            q, d = self.pair()
            if (q.pk, d.pk) in seen:
                continue
            seen.add((q.pk, d.pk))
            rows.append(
                services.JudgmentRow(
                    line=line,
                    query_external_id=q.external_id,
                    document_external_id=d.external_id,
                    **self.label(),
                )
            )
        services.judgments_import(collection=self.coll, judge=judge, rows=rows)

    def pool_more(self) -> None:
        pairs = {(self.pair()[0].pk, self.pair()[1].pk) for _ in range(self.rng.randint(1, 4))}
        services.pool_add_ids(collection=self.coll, pairs=pairs, source="run")

    def new_document(self) -> None:
        self.next_id += 1
        doc = factories.document(self.coll, f"n{self.next_id}", has_content=False)
        q = self.rng.choice(list(Query.objects.filter(collection=self.coll)) or [None])
        if q is not None:
            services.pool_add_ids(collection=self.coll, pairs=[(q.pk, doc.pk)], source="run")

    def content_arrives(self) -> None:
        ids = list(
            Document.objects.filter(collection=self.coll, has_content=False).values_list(
                "external_id", flat=True
            )
        )
        if ids:
            rows = [
                services.DocumentRow(line=i + 1, external_id=x, title="t", body="b")
                for i, x in enumerate(self.rng.sample(ids, self.rng.randint(1, len(ids))))
            ]
            services.documents_import(collection=self.coll, rows=rows)

    def settings(self) -> None:
        services_adjudication.aggregation_settings_update(
            collection=self.coll,
            actor=self.admin,
            judges_per_pair=self.rng.randint(1, 3),
            max_judges_per_pair=self.rng.choice([0, 2, 3, 4]),
            disagreement_spread=self.rng.randint(1, 4),
        )

    def adjudicate(self) -> None:
        in_force = Adjudication.objects.filter(collection=self.coll, revoked_at__isnull=True)
        if in_force.exists() and self.rng.random() < 0.4:
            services_adjudication.adjudication_revoke(
                adjudication=in_force.order_by("?").first(), actor=self.admin
            )
            return
        q, d = self.pair()
        services_adjudication.adjudication_record(
            query=q, document=d, grade=self.rng.randint(0, 4), reason="because", actor=self.admin
        )

    def remove_labels(self) -> None:
        services_adjudication.judge_labels_remove(
            collection=self.coll, judge=self.rng.choice(self.judges), actor=self.admin
        )

    def delete_row(self) -> None:
        if self.rng.random() < 0.5 and Query.objects.filter(collection=self.coll).count() > 1:
            services_progress.query_delete(query=self.pair()[0])
        elif Document.objects.filter(collection=self.coll).count() > 2:
            services_progress.document_delete(document=self.pair()[1])

    STEPS = (
        ("judge", 12),
        ("regrade", 5),
        ("undo", 3),
        ("delete", 3),
        ("bulk_import", 3),
        ("pool_more", 3),
        ("new_document", 1),
        ("content_arrives", 1),
        ("settings", 2),
        ("adjudicate", 2),
        ("remove_labels", 1),
        ("delete_row", 1),
    )

    def step(self) -> str:
        names, weights = zip(*self.STEPS, strict=True)
        name = self.rng.choices(names, weights)[0]
        getattr(self, name)()
        return name


def assert_previous_entry_ids_agree(world: World) -> None:
    """The fast previous_entry_id equals the reference, from the top and from each label."""
    for judge in world.judges:
        judgments = list(Judgment.objects.filter(judge=judge, collection=world.coll))
        for before in [None, *world.rng.sample(judgments, min(3, len(judgments)))]:
            kwargs = {"judge": judge, "collection": world.coll, "before": before}
            assert selectors.previous_entry_id(**kwargs) == (
                selectors.previous_entry_id_reference(**kwargs)
            )


@pytest.mark.parametrize("seed", range(5))
def test_random_sequences_keep_the_counters_equal_to_a_recount(seed):
    world = World(random.Random(seed))
    done = Counter()
    for n in range(45):
        name = world.step()
        done[name] += 1
        problems = selectors_progress.progress_problems(collection=world.coll)
        assert problems == [], f"step {n} ({name}), seed {seed}: {problems}"
        if n % 10 == 9:
            assert_previous_entry_ids_agree(world)
    assert len(done) >= 8  # the sequence exercised most kinds of write
    # the sequence reached states with open and closed pairs and judged pairs
    entries = PoolEntry.objects.filter(collection=world.coll)
    assert entries.filter(is_open=True).exists() or entries.filter(is_open=False).exists()
    assert JudgeProgress.objects.filter(collection=world.coll, done__gt=0).exists()


def test_split_pairs_open_and_close_with_the_grades():
    coll = factories.collection("split", judges_per_pair=2, max_judges_per_pair=3)
    q, d = factories.query(coll), factories.document(coll)
    entry = factories.pool_entry(coll, q, d)
    a, b, c = (factories.human_judge(factories.user()) for _ in range(3))
    services.judgment_record(judge=a, query=q, document=d, grade=0)
    services.judgment_record(judge=b, query=q, document=d, grade=4)  # 2 grades, disagree
    entry.refresh_from_db()
    assert entry.is_open
    assert selectors.judge_progress(judge=c, collection=coll) == selectors.Progress(0, 1)
    assert selectors.judge_progress(judge=a, collection=coll) == selectors.Progress(1, 0)
    services.judgment_record(judge=b, query=q, document=d, grade=0)  # now they agree
    entry.refresh_from_db()
    assert not entry.is_open
    assert selectors.judge_progress(judge=c, collection=coll) == selectors.Progress(0, 0)
    assert selectors_progress.progress_problems(collection=coll) == []


def test_pair_is_open_matches_the_sql_definition():
    rng = random.Random(7)
    coll = factories.collection("defn", judges_per_pair=2, max_judges_per_pair=5)
    q = factories.query(coll)
    judges = [factories.human_judge(factories.user()) for _ in range(5)]
    for i in range(40):
        d = factories.document(coll, f"d{i}", has_content=rng.random() < 0.8)
        for judge in rng.sample(judges, rng.randint(0, 5)):
            services.judgment_record(judge=judge, query=q, document=d, grade=rng.randint(0, 4))
    for jpp, max_jpp, spread in [(1, 0, 2), (2, 3, 2), (2, 5, 1), (3, 5, 3), (1, 4, 4)]:
        services_adjudication.aggregation_settings_update(
            collection=coll,
            actor=None,
            judges_per_pair=jpp,
            max_judges_per_pair=max_jpp,
            disagreement_spread=spread,
        )
        if not PoolEntry.objects.filter(collection=coll).exists():
            services.pool_add_ids(
                collection=coll, pairs=[(q.pk, d.pk) for d in coll.documents.all()], source="run"
            )
        expected = selectors_progress.open_pair_ids(collection=coll)
        for entry in PoolEntry.objects.filter(collection=coll).select_related("document"):
            grades = Counter(
                Judgment.objects.filter(
                    query=q, document=entry.document, status=Status.GRADED
                ).values_list("grade", flat=True)
            )
            python = progress.pair_is_open(
                has_content=entry.document.has_content,
                graded_count=entry.graded_count,
                grades=grades,
                judges_per_pair=jpp,
                max_judges_per_pair=max_jpp,
                disagreement_spread=spread,
            )
            assert python == (entry.pk in expected) == entry.is_open
        assert 0 < len(expected) < 40
        assert selectors_progress.progress_problems(collection=coll) == []


def test_rebuild_repairs_counters_and_the_command_checks_them(capsys):
    coll = factories.collection("repair", judges_per_pair=2)
    entries = factories.pool(coll, 2, 3)
    judge = factories.human_judge(factories.user())
    for entry in entries[:4]:
        services.judgment_record(judge=judge, query=entry.query, document=entry.document, grade=2)
    good = selectors.judge_progress(judge=judge, collection=coll)
    assert good == selectors.Progress(done=4, remaining=2)
    PoolEntry.objects.filter(collection=coll).update(is_open=False)  # as if loaded raw
    PoolProgress.objects.filter(collection=coll).update(open_pairs=0)
    JudgeProgress.objects.filter(collection=coll).delete()
    assert selectors_progress.progress_problems(collection=coll) != []
    with pytest.raises(CommandError):
        call_command("rebuild_progress", coll.slug, "--check")
    call_command("rebuild_progress", coll.slug)
    assert selectors_progress.progress_problems(collection=coll) == []
    assert selectors.judge_progress(judge=judge, collection=coll) == good
    call_command("rebuild_progress", "--check")
    assert "counters agree with a recount" in capsys.readouterr().out


def test_history_is_unaffected_and_adjudication_moves_no_counter():
    coll = factories.collection("adj", judges_per_pair=1)
    q, d = factories.query(coll), factories.document(coll)
    factories.pool_entry(coll, q, d)
    before = list(JudgeProgress.objects.values_list("judge_id", "done", "done_open"))
    cora = factories.user("cora")
    services_adjudication.adjudication_record(
        query=q, document=d, grade=3, reason="final", actor=cora
    )
    assert list(JudgeProgress.objects.values_list("judge_id", "done", "done_open")) == before
    assert PoolProgress.objects.get(collection=coll).open_pairs == 1
    assert JudgmentEvent.objects.filter(channel=JudgmentEvent.Channel.ADJUDICATION).count() == 1
