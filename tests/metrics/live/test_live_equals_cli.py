"""Live scores equal ``manage.py evaluate`` on the exported list, for any run and flavour.

A differential test over random cases: random collections and live lists (queries
without relevant documents, queries nobody judged), random runs (queries left out, tied
scores, documents the collection lacks, a run of one query; TREC text, a JSON array on one
line, JSON Lines), random NDCG flavours and trec_eval measures. Runs are submitted
through the service and then judged further (the live path rescores them); every stored
per-query value, mean and sum must equal what the command prints for the exported qrels
and the submitted file, to 1e-12. The one rule for a query a run leaves out -- 0 on
every averaged measure, whatever its ``empty=`` -- was once the live path's alone to
break (``ideal=local,empty=one`` scored it 1).
"""

from __future__ import annotations

import json
import math
import random
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from judging import services as judging_services
from judging.models import Collection, Query
from metrics import services
from metrics.live import scoring, store
from metrics.models import Run
from tests import factories
from tests.metrics import factories as metrics_factories
from tests.metrics.live.test_scores import export_qrels

pytestmark = pytest.mark.django_db

TREC_MEASURES = [
    "ndcg_cut.5",
    "ndcg",
    "P.5",
    "P.10",
    "map",
    "map_cut.10",
    "Rprec",
    "bpref",
    "recip_rank",
    "recall.10",
    "iprec_at_recall.0.50",
    "11pt_avg",
    "success.1",
    "set_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_nonrel_judged_ret",
]


def _flavour(rng: random.Random) -> str:
    params = [
        f"gain={rng.choice(['linear', 'exp', '{0:0,1:1,2:3}'])}",
        f"discount={rng.choice(['log2', 'jk', 'rank'])}",
        f"ideal={rng.choice(['global', 'recall', 'local', 'max'])}",
        f"empty={rng.choice(['zero', 'one', 'skip'])}",
    ]
    if rng.random() < 0.3:
        params.append("judged_only=true")
    cutoff = rng.choice(["@1", "@3", "@5", "@10", ""])
    return f"nDCG({','.join(rng.sample(params, len(params)))}){cutoff}"


def _run(rng: random.Random, qids: list[str], docs: list[str], tag: str) -> tuple[bytes, str]:
    """Return a random run (content, file name) over some of ``qids``."""
    chosen = rng.sample(qids, rng.randint(1, len(qids)))
    rows = []
    for qid in chosen:
        for docno in rng.sample(docs, rng.randint(1, len(docs) - 2)):
            rows.append((qid, docno, float(rng.randint(0, 4))))  # many ties
        if rng.random() < 0.3:
            rows.append((qid, f"unknown-{tag}-{qid}", 0.5))
    style = rng.choice(["trec", "json", "jsonl"])
    if style == "trec":
        text = "".join(f"{q} Q0 {d} {i} {s} {tag}\n" for i, (q, d, s) in enumerate(rows, 1))
        return text.encode(), f"{tag}.txt"
    items = [{"qid": q, "docno": d, "score": s} for q, d, s in rows]
    if style == "json":  # one array on one line
        return json.dumps(items, separators=(",", ":")).encode(), f"{tag}.json"
    return "".join(json.dumps(i) + "\n" for i in items).encode(), f"{tag}.jsonl"


def _cli(tmp_path: Path, coll: Collection, content: bytes, name: str, measures: list[str]):
    (tmp_path / "qrels.txt").write_bytes(export_qrels(coll))
    (tmp_path / name).write_bytes(content)
    args = [str(tmp_path / "qrels.txt"), str(tmp_path / name), "-q", "--format", "json"]
    for measure in measures:
        args += ["-m", measure]
    out = StringIO()
    call_command("evaluate", *args, stdout=out)
    (evaluated,) = json.loads(out.getvalue()).values()
    return evaluated


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None or math.isnan(a) or math.isnan(b):
        return (a is None or math.isnan(a)) and (b is None or math.isnan(b))
    return abs(a - b) <= 1e-12


def scored_collection(
    rng: random.Random, slug: str, measures: list[str], *, runs: tuple[int, int] = (2, 4)
) -> tuple[Collection, dict[int, tuple[bytes, str]]]:
    """Build a random collection, judge it, submit random runs between more judgments.

    Returns the collection and each run's submitted file (content, name) by run id. The
    first query has no relevant document, the last is never judged (not live).
    """
    coll = factories.collection(slug, measures=measures, pool_depth=2)
    qids = [f"q{i}" for i in range(1, rng.randint(4, 7))]
    docs = [f"d{i}" for i in range(1, 16)]
    queries = {qid: factories.query(coll, qid) for qid in qids}
    documents = {docno: factories.document(coll, docno) for docno in docs}
    judge = factories.human_judge(factories.user(f"j-{slug}"))

    def judge_some(count: int) -> None:
        for _ in range(count):
            qid = rng.choice(qids[:-1])
            top = 0 if qid == qids[0] else 4
            judging_services.judgment_record(
                judge=judge,
                query=queries[qid],
                document=documents[rng.choice(docs)],
                grade=rng.randint(0, top),
            )

    judge_some(rng.randint(0, 12))
    team = metrics_factories.team(coll, "t")
    files = {}
    for i in range(rng.randint(*runs)):
        content, name = _run(rng, qids, docs, f"run{i}")
        run = services.run_submit(
            collection=coll, team=team, tag=f"run{i}", content=content, filename=name, user=None
        )
        files[run.pk] = (content, name)
        judge_some(rng.randint(1, 6))  # rescored live after each submission
    return coll, files


def assert_live_equals_cli(
    coll: Collection, files: dict[int, tuple[bytes, str]], measures: list[str], tmp_path: Path
) -> int:
    """Check every stored value, mean and sum against the command; return values compared."""
    names = scoring.canonical_names(measures)
    parsed = {m.canonical: m for m in scoring.resolved(measures)}
    board = store.board_read(coll.pk)
    means = board.means()
    external = dict(Query.objects.filter(collection=coll).values_list("pk", "external_id"))
    compared = 0
    for run in Run.objects.filter(collection=coll):
        content, name = files[run.pk]
        cli = _cli(tmp_path, coll, content, name, measures)
        live = {external[q]: v for q, v in metrics_factories.query_scores(run).items()}
        cli_queries = {q for values in cli.values() for q in values} - {"all"}
        assert set(live) == cli_queries, (run.tag, sorted(live), sorted(cli_queries))
        row = list(board.run_ids).index(run.pk)
        for canonical in names:
            printed = cli[parsed[canonical].display]  # trec_eval's name where asked by it
            for qid, values in live.items():
                assert _same(values[canonical], printed[qid]), (run.tag, canonical, qid)
                compared += 1
            if parsed[canonical].aggregate == "sum":
                total = float(board.sums[row, board.names.index(canonical)])
                assert _same(total, printed["all"]), (run.tag, canonical)
            else:
                assert _same(means[run.pk][canonical], printed["all"]), (run.tag, canonical)
    return compared


@pytest.mark.parametrize("seed", range(12))
def test_live_scores_equal_the_command_for_random_runs_and_flavours(seed, tmp_path):
    rng = random.Random(seed)
    measures = [_flavour(rng) for _ in range(4)] + rng.sample(TREC_MEASURES, 8)
    coll, files = scored_collection(rng, f"diff{seed}", measures)
    assert assert_live_equals_cli(coll, files, measures, tmp_path) > 0


def test_a_left_out_query_scores_zero_live_as_in_the_command(tmp_path):
    """The audit's case: a run of q101 only, under ideal=local and empty=one, @5."""
    flavour = "nDCG(gain=exp,discount=jk,ideal=local,empty=one)@5"
    coll = factories.collection("left-out", measures=[flavour])
    q1, q2 = factories.query(coll, "101"), factories.query(coll, "102")
    d1, d2 = factories.document(coll, "a"), factories.document(coll, "b")
    judge = factories.human_judge(factories.user())
    judging_services.judgment_record(judge=judge, query=q1, document=d1, grade=3)
    judging_services.judgment_record(judge=judge, query=q2, document=d2, grade=2)
    content = b"101 Q0 a 1 1.0 only\n"
    run = services.run_submit(
        collection=coll,
        team=metrics_factories.team(coll),
        tag="only",
        content=content,
        filename="only.txt",
        user=None,
    )
    (name,) = scoring.canonical_names([flavour])
    cli = _cli(tmp_path, coll, content, "only.txt", [flavour])[name]
    assert cli == {"101": 1.0, "102": 0.0, "all": 0.5}
    assert metrics_factories.query_scores(run) == {q1.pk: {name: 1.0}, q2.pk: {name: 0.0}}
    assert store.board_read(coll.pk).means()[run.pk][name] == 0.5
    judging_services.judgment_record(judge=judge, query=q2, document=d1, grade=1)  # live path
    assert metrics_factories.query_scores(run)[q2.pk] == {name: 0.0}
    assert store.board_read(coll.pk).means()[run.pk][name] == 0.5
