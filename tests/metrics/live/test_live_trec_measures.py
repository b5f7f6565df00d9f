"""trec_eval's remaining all_trec measures on live leaderboards (issue 33, item 5).

Every one of them (infAP, rbp, rbp_resid, utility, relative_P, Rprec_mult, binG, G,
ndcg_rel, Rndcg, unj) is an arithmetic mean of per-query values, so a leaderboard shows it
like map. Live scores must equal ``manage.py evaluate`` on the exported list to 1e-12, per
query and as means. The one refusal: utility with a non-zero fourth coefficient and no
collection size (trec_eval's ``-N``; a leaderboard has none). ``relstring`` is text, not a
score, and is refused too.
"""

from __future__ import annotations

import random

import pytest
from django.core.exceptions import ValidationError

from judging import services as judging_services
from judging.models import Query
from metrics import services
from metrics.engine import MeasureError
from metrics.live import scoring, store
from metrics.models import Run
from tests import factories
from tests.metrics import factories as metrics_factories
from tests.metrics.live.test_live_equals_cli import _cli, _run, _same

pytestmark = pytest.mark.django_db

NEW_MEASURES = [
    "infAP",
    "rbp",
    "rbp.p=0.7,1=1,2=4",
    "rbp_resid.p=0.8",
    "utility",
    "utility.2,-1,-0.5,0",
    "Utility(a=1,b=-1,c=0,d=0.01,n_docs=500)",
    "relative_P.1,5",
    "Rprec_mult.0.5,1.5",
    "binG",
    "G",
    "G.0=0,1=3,2=1",
    "ndcg_rel",
    "Rndcg",
    "unj.3,10",
    "InfAP(rel=2)",
]


@pytest.mark.parametrize("name", NEW_MEASURES)
def test_leaderboards_accept_each_measure_as_a_mean(name):
    labels = scoring.measure_labels([name])
    assert labels and all(label.canonical for label in labels)
    assert {m.aggregate for m in scoring.resolved([name])} == {"mean"}


@pytest.mark.parametrize("name", ["utility.1,-1,0,0.5", "Utility(d=1)"])
def test_utility_without_a_collection_size_is_refused_naming_why(name):
    with pytest.raises(MeasureError, match="collection's size"):
        scoring.measure_labels([name])
    coll = factories.collection("utility-n")
    with pytest.raises(ValidationError, match="collection's size"):
        services.collection_settings_update(collection=coll, measures=["map", name])


@pytest.mark.parametrize("name", ["relstring", "relstring.5", "RelString@3"])
def test_relstring_is_text_and_refused_naming_why(name):
    with pytest.raises(MeasureError, match="is text"):
        scoring.measure_labels([name])


@pytest.mark.parametrize("seed", range(3))
def test_live_scores_equal_the_command(seed, tmp_path):
    rng = random.Random(500 + seed)
    measures = NEW_MEASURES
    coll = factories.collection(f"trec{seed}", measures=measures, pool_depth=2)
    qids = [f"q{i}" for i in range(1, rng.randint(4, 7))]
    docs = [f"d{i}" for i in range(1, 16)]
    queries = {qid: factories.query(coll, qid) for qid in qids}
    documents = {docno: factories.document(coll, docno) for docno in docs}
    judge = factories.human_judge(factories.user(f"jt{seed}"))

    def judge_some(count: int) -> None:
        for _ in range(count):
            qid = rng.choice(qids[:-1])  # the last query is never judged: not live
            top = 0 if qid == qids[0] else 4  # the first has no relevant document
            judging_services.judgment_record(
                judge=judge,
                query=queries[qid],
                document=documents[rng.choice(docs)],
                grade=rng.randint(0, top),
            )

    judge_some(rng.randint(3, 12))
    team = metrics_factories.team(coll, "t")
    files = {}
    for i in range(rng.randint(2, 3)):
        content, name = _run(rng, qids, docs, f"run{i}")
        run = services.run_submit(
            collection=coll, team=team, tag=f"run{i}", content=content, filename=name, user=None
        )
        files[run.pk] = (content, name)
        judge_some(rng.randint(1, 6))  # rescored live after each submission
    names = scoring.canonical_names(measures)
    parsed = {m.canonical: m for m in scoring.resolved(measures)}
    means = store.board_read(coll.pk).means()
    external = dict(Query.objects.filter(collection=coll).values_list("pk", "external_id"))
    compared = 0
    for run in Run.objects.filter(collection=coll):
        content, name = files[run.pk]
        cli = _cli(tmp_path, coll, content, name, measures)
        live = {external[q]: v for q, v in metrics_factories.query_scores(run).items()}
        for canonical in names:
            printed = cli[parsed[canonical].display]
            for qid, values in live.items():
                assert _same(values[canonical], printed[qid]), (run.tag, canonical, qid)
                compared += 1
            assert _same(means[run.pk][canonical], printed["all"]), (run.tag, canonical)
    assert compared > 50
