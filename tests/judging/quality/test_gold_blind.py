"""Gold pairs are blind: a judge who reads everything they can reach cannot tell them.

The campaign of :func:`campaign` marks gold pairs before the first run, between two runs
and after the last one, some in a run's top documents and some in none. As a judge who
has judged nothing yet, the tests then read every page and endpoint a judge can reach and
check, field by field, that no value — nor the order of values — sets gold pairs apart:
the pool's source, time, id, grade count and filters; the order the queue serves pairs
in; the judging card; the judge's own labels and their history; and the number of SQL
queries behind a gold and an ordinary card (a different code path would show in the
time a page takes).
"""

from __future__ import annotations

import random
import re
from types import SimpleNamespace

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from scipy import stats

from judging import selectors, services
from judging.models import Judgment, Membership, PoolEntry
from judging.quality import qualification
from judging.quality import selectors as quality_selectors
from judging.quality import services as gold_services
from judging.quality.models import GoldPair
from metrics import services as metrics_services
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db
Role = Membership.Role
QUERIES, DOCS, DEPTH = 5, 44, 10


def _submit(world, tag: str, offset: int) -> None:
    """Submit a run ranking documents ``offset``… of every query (its top DEPTH pooled)."""
    lines = []
    for qi in range(QUERIES):
        for rank in range(DEPTH + 5):
            doc = (offset + rank + 3 * qi) % 40  # d40… are in no run
            lines.append(f"q{qi} Q0 d{doc:02d} {rank + 1} {100 - rank} {tag}\n")
    metrics_services.run_submit(
        collection=world.coll,
        team=world.team,
        tag=tag,
        content="".join(lines).encode(),
        filename=f"{tag}.txt",
        user=None,
    )


def _gold(world, q: int, d: int, grade: int = 2):
    return gold_services.gold_set(
        query=world.queries[q], document=world.docs[d], grade=grade, actor=world.boss
    )


@pytest.fixture
def campaign():
    """Runs A and B, judging by ben, and gold pairs marked before, between and after them.

    One judge per pair, so the pairs ben judged are closed; gold pairs he judged are still
    to be served to ann (every judge meets every gold pair).
    """
    coll = factories.collection("blind", pool_depth=DEPTH, judges_per_pair=1, gold_rate=0.05)
    boss, ann, ben = (factories.user(name) for name in ("boss", "ann", "ben"))
    factories.member(coll, boss, Role.COORDINATOR)
    for judge in (ann, ben):
        factories.member(coll, judge, Role.JUDGE)
    world = SimpleNamespace(
        coll=coll,
        boss=boss,
        ann=factories.human_judge(ann),
        ben=factories.human_judge(ben),
        queries=[factories.query(coll, f"q{i}") for i in range(QUERIES)],
        docs=[factories.document(coll, f"d{i:02d}") for i in range(DOCS)],
        team=metrics_services.team_create(collection=coll, name="T", members=[]),
    )
    # before any run: one pair of run A's top, one pair of no run (both wait)
    _gold(world, 0, 2)
    _gold(world, 1, 41)
    _submit(world, "A", 0)
    for entry in PoolEntry.objects.filter(collection=coll).order_by("pk")[:12]:
        services.judgment_record(
            judge=world.ben, query=entry.query, document=entry.document, grade=entry.pk % 3
        )
    # between A and B: a pair of B's top only, a pair of no run, a pair ben closed
    _gold(world, 2, 22)
    _gold(world, 3, 42)
    closed = PoolEntry.objects.filter(collection=coll, is_open=False).order_by("pk")[3]
    gold_services.gold_set(query=closed.query, document=closed.document, grade=1, actor=world.boss)
    _submit(world, "B", 20)
    # after the runs: a pooled pair (stays as it is) and a pair of no run, which waits
    # for the coordinator's next pairs
    _gold(world, 4, 12)
    _gold(world, 0, 43)
    pooled = set(PoolEntry.objects.values_list("query_id", "document_id"))
    marked = set(GoldPair.objects.values_list("query_id", "document_id"))
    fresh = [
        (q.pk, d.pk) for q in world.queries for d in world.docs[:40] if (q.pk, d.pk) not in pooled
    ]
    services.pool_add_ids(
        collection=coll,
        pairs=[pair for pair in fresh if pair not in marked][:20],
        source=PoolEntry.Source.MANUAL,
    )
    world.gold = {(g.query_id, g.document_id) for g in GoldPair.objects.filter(collection=coll)}
    return world


def _is_gold(world, row) -> bool:
    q = next(x for x in world.queries if x.external_id == row["query"])
    d = next(x for x in world.docs if x.external_id == row["document"])
    return (q.pk, d.pk) in world.gold


def _pool(world, user, **params) -> list[dict]:
    response = client_for(user).get(
        f"/api/v1/collections/{world.coll.slug}/pool/", {"limit": 1000, **params}
    )
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def _auc(gold: list, other: list) -> float:
    """Return the Mann–Whitney AUC of ``gold`` against ``other`` (0.5: no separation)."""
    order = {value: i for i, value in enumerate(sorted(set(gold) | set(other)))}
    u = stats.mannwhitneyu(
        [order[v] for v in gold], [order[v] for v in other], alternative="two-sided"
    ).statistic
    return float(u) / (len(gold) * len(other))


def _no_value_gives_gold_away(gold: list, other: list) -> None:
    """Assert that no value of a field is gold-only, and none is mostly gold.

    The best classifier on such a field alone is then "never gold": no better than chance.
    """
    for value in set(gold):
        hits, misses = gold.count(value), other.count(value)
        assert misses >= hits, (value, hits, misses)


def _no_order_gives_gold_away(gold: list, other: list) -> None:
    """Assert that ranking by a field neither separates gold pairs nor puts them first or last."""
    assert 0.15 <= _auc(gold, other) <= 0.85, _auc(gold, other)
    ranked = sorted([(v, True) for v in gold] + [(v, False) for v in other])
    for end in (ranked, ranked[::-1]):
        leading = next(i for i, (_v, is_gold) in enumerate(end) if not is_gold)
        assert leading <= 1, end[:5]  # at most one gold pair before the first ordinary one


def test_every_gold_pair_is_pooled_with_the_pairs_around_it(campaign):
    world = campaign
    entries = {
        (e.query_id, e.document_id): e for e in PoolEntry.objects.filter(collection=world.coll)
    }
    assert world.gold <= entries.keys()  # every one reached the pool
    for pair in world.gold:
        entry = entries[pair]
        same = [e for e in entries.values() if e.added_at == entry.added_at]
        assert sum(1 for e in same if (e.query_id, e.document_id) not in world.gold) >= 9
        assert {e.source for e in same} == {entry.source}
    x41 = entries[(world.queries[1].pk, world.docs[41].pk)]
    assert x41.source == PoolEntry.Source.RUN  # in no run, it came with run A's pairs
    x43 = entries[(world.queries[0].pk, world.docs[43].pk)]
    assert x43.source == PoolEntry.Source.MANUAL  # with the coordinator's pairs


def test_the_pool_a_judge_reads_sets_no_gold_pair_apart(campaign):
    world = campaign
    rows = _pool(world, world.ann.user)
    assert len(rows) >= 100
    gold = [r for r in rows if _is_gold(world, r)]
    other = [r for r in rows if not _is_gold(world, r)]
    assert len(gold) == len(world.gold) == 7
    assert {tuple(sorted(r)) for r in rows} == {
        ("added_at", "document", "graded_count", "id", "query", "source")
    }
    assert {r["graded_count"] for r in rows} == {None}  # no grade counts for judges
    _no_value_gives_gold_away([r["source"] for r in gold], [r["source"] for r in other])
    _no_value_gives_gold_away([r["added_at"] for r in gold], [r["added_at"] for r in other])
    _no_order_gives_gold_away([r["added_at"] for r in gold], [r["added_at"] for r in other])
    _no_order_gives_gold_away([r["id"] for r in gold], [r["id"] for r in other])
    # the ids keep no trace of the order pairs entered the pool in
    pks = {selectors.pair_pk(r["id"]) for r in rows}
    assert pks == set(PoolEntry.objects.filter(collection=world.coll).values_list("pk", flat=True))
    rho = stats.spearmanr([r["id"] for r in rows], [selectors.pair_pk(r["id"]) for r in rows])
    assert abs(rho.statistic) < 0.35
    assert "gold" not in str(rows).lower()
    # "still open to you": ben's closed pairs are not, except the gold ones ann must meet
    still = {(r["query"], r["document"]) for r in _pool(world, world.ann.user, needs_grades=1)}
    member = [(r["query"], r["document"]) in still for r in rows]
    _no_value_gives_gold_away(
        [m for m, r in zip(member, rows, strict=True) if _is_gold(world, r)],
        [m for m, r in zip(member, rows, strict=True) if not _is_gold(world, r)],
    )
    assert all((r["query"], r["document"]) in still for r in gold)
    # coordinators keep the counts
    assert {r["graded_count"] for r in _pool(world, world.boss)} == {0, 1}


def test_without_the_fix_the_auditors_rule_would_find_them(campaign):
    """The auditor's rule (source manual, latest ids) finds nothing now."""
    world = campaign
    rows = _pool(world, world.ann.user)
    manual = [r for r in rows if r["source"] == "manual"]
    assert sum(_is_gold(world, r) for r in manual) <= len(manual) // 9
    latest = sorted(rows, key=lambda r: r["id"])[-3:]
    assert sum(_is_gold(world, r) for r in latest) <= 1


def _serve_everything(world, seed: int) -> list[tuple[int, int]]:
    """Let ann judge until the queue is empty (draws seeded); return the served pairs."""
    served = []
    draws = random.Random(seed)
    original = selectors._random
    selectors._random = draws
    try:
        with transaction.atomic():
            # a new draw of the judge's shuffle too: each run is a campaign of its own
            entries = list(PoolEntry.objects.filter(collection=world.coll))
            for entry in entries:
                entry.shuffle_key = draws.randrange(2**31 - 1)
            PoolEntry.objects.bulk_update(entries, ["shuffle_key"])
            while True:
                entry = selectors.next_pair(
                    judge=world.ann,
                    collection=world.coll,
                    current_query_id=selectors.last_query_id(
                        judge=world.ann, collection=world.coll
                    ),
                )
                if entry is None:
                    break
                served.append((entry.query_id, entry.document_id))
                services.judgment_record(
                    judge=world.ann, query=entry.query, document=entry.document, grade=1
                )
                assert len(served) < 400
            transaction.set_rollback(True)
    finally:
        selectors._random = original
    return served


def test_the_queue_serves_gold_pairs_at_no_recognisable_place(campaign):
    world = campaign
    progress = selectors.judge_progress(judge=world.ann, collection=world.coll)
    positions, gold_changes, ordinary_changes = [], [], []
    for seed in range(10):
        served = _serve_everything(world, seed)
        assert len(served) == progress.remaining  # the count of pairs left was right
        assert len(set(served)) == len(served) and world.gold <= set(served)
        for i, pair in enumerate(served):
            changed = i > 0 and served[i - 1][0] != pair[0]
            if pair in world.gold:
                positions.append(i / (len(served) - 1))
                gold_changes.append(changed)
            else:
                ordinary_changes.append(changed)
    # spread over the whole queue, not first, not last
    assert stats.kstest(positions, "uniform").pvalue > 0.001, sorted(positions)
    assert 0.3 < np.mean(positions) < 0.7
    # no more often at a change of query than ordinary pairs are
    assert np.mean(gold_changes) <= np.mean(ordinary_changes) + 0.1


def _shape(html: str) -> list[str]:
    """Return the page's tags with their attribute names, values and text left out."""
    tags = re.findall(r"<([a-zA-Z][\w-]*)([^>]*)>", html)
    return [name + " " + " ".join(sorted(re.findall(r"([\w-]+)=", attrs))) for name, attrs in tags]


def _closed_pairs(world) -> tuple[PoolEntry, PoolEntry]:
    """Return a gold pair and an ordinary pair, both judged by ben (closed)."""
    closed = PoolEntry.objects.filter(collection=world.coll, is_open=False).order_by("pk")
    gold = next(e for e in closed if (e.query_id, e.document_id) in world.gold)
    other = next(
        e
        for e in closed
        if (e.query_id, e.document_id) not in world.gold and e.query_id == gold.query_id
    )
    return gold, other


def test_the_card_and_its_cost_are_the_same_for_a_gold_pair(client, campaign):
    world = campaign
    client.force_login(world.ann.user)
    gold, _other = _closed_pairs(world)
    ordinary = PoolEntry.objects.filter(
        collection=world.coll, is_open=True, query_id=gold.query_id
    ).first()
    pages, counts = {}, {}
    for name, entry in (("gold", gold), ("other", ordinary)):
        url = reverse("judging:judge_pair", args=[world.coll.slug, selectors.pair_ref(entry.pk)])
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200
        pages[name], counts[name] = response.content.decode(), len(queries)
        assert "gold" not in pages[name].lower()
        # "n of m for this query": the same total for both (the gold pair is counted)
        assert re.search(r"\d+ of (\d+) for this query", pages[name])
    assert _shape(pages["gold"]) == _shape(pages["other"])
    assert counts["gold"] == counts["other"]
    totals = {re.search(r"\d+ of (\d+) for this query", p).group(1) for p in pages.values()}
    assert len(totals) == 1
    # the primary key is nowhere on the card
    assert f"/judge/{gold.pk}/" not in pages["gold"]


def test_serving_and_saving_a_gold_pair_cost_what_an_ordinary_one_costs(
    client, campaign, monkeypatch
):
    world = campaign
    gold, _other = _closed_pairs(world)
    first = PoolEntry.objects.filter(
        collection=world.coll, is_open=True, query_id=gold.query_id
    ).first()
    services.judgment_record(judge=world.ann, query=first.query, document=first.document, grade=1)
    client.force_login(world.ann.user)  # on gold's query now: a gold pair may come
    next_url = reverse("judging:judge_next", args=[world.coll.slug])
    counts, served = {}, {}
    for name, draw in (("gold", 0.0), ("other", 0.999)):
        monkeypatch.setattr(selectors._random, "random", lambda value=draw: value)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(next_url)
        assert response.status_code == 200
        counts[name] = len(queries)
        ref = int(re.search(rb'data-entry-id="(\d+)"', response.content).group(1))
        served[name] = PoolEntry.objects.get(pk=selectors.pair_pk(ref))
    # The gold draw serves a closed gold pair (ben's grade closed it; ann is still to meet
    # it); the other draw serves the ordinary order's next open pair, which may itself be
    # an open gold pair, as the judge's shuffle (keyed by ids) puts one first or not.
    assert (served["gold"].query_id, served["gold"].document_id) in world.gold
    assert not served["gold"].is_open and served["other"].is_open
    assert counts["gold"] == counts["other"]
    # Saving takes the same path too: a gold pair costs what any pair in its state costs
    # (here closed, as ben's ordinary pair is). Closing a pair costs a few more writes;
    # that is the pair's state, not gold (docs/security.md, "Gold pairs are blind").
    saves = {}
    for name, entry in (("gold", served["gold"]), ("other", _other)):
        url = reverse("judging:judge_pair", args=[world.coll.slug, selectors.pair_ref(entry.pk)])
        with CaptureQueriesContext(connection) as queries:
            assert client.post(url, {"grade": "2"}).status_code == 303
        saves[name] = len(queries)
    assert saves["gold"] == saves["other"]


def test_the_judges_own_labels_and_history_read_alike(client, campaign):
    world = campaign
    gold, other = _closed_pairs(world)
    fresh = PoolEntry.objects.filter(collection=world.coll, is_open=True).order_by("pk")[:3]
    for entry in (gold, other, *fresh):
        services.judgment_record(
            judge=world.ann, query=entry.query, document=entry.document, grade=2, seconds=20.0
        )
    api = client_for(world.ann.user)
    base = f"/api/v1/collections/{world.coll.slug}/"
    rows = api.get(base + "judgments/").json()["results"]
    assert len(rows) == 5
    golds = [r for r in rows if _is_gold(world, r)]
    others = [r for r in rows if not _is_gold(world, r)]
    assert golds and others
    for field in ("counted", "provenance", "status", "seconds", "note", "evidence"):
        assert {str(r[field]) for r in golds} <= {str(r[field]) for r in others}, field
    assert {tuple(sorted(r)) for r in rows} == {tuple(sorted(rows[0]))}
    assert "gold" not in str(rows).lower()
    histories = {
        _is_gold(world, r): api.get(base + f"judgments/{r['id']}/history/").json()["results"]
        for r in rows
    }
    assert {tuple(sorted(h[0])) for h in histories.values()} == {tuple(sorted(histories[True][0]))}
    assert histories[True][0]["channel"] == histories[False][0]["channel"]
    client.force_login(world.ann.user)
    page = client.get(reverse("judging:judgment_list", args=[world.coll.slug])).content.decode()
    assert "gold" not in page.lower()
    rows_html = re.findall(r"<tr[^>]*>.*?</tr>", page, flags=re.S)[1:]
    assert len({tuple(_shape(r)) for r in rows_html}) == 1
    collection = api.get(base).json()
    assert "gold" not in str(collection).lower()
    documents = api.get(base + "documents/", {"pooled": 1, "limit": 1000}).json()["results"]
    assert "gold" not in str(documents).lower() and all("id" not in d for d in documents)


def test_a_primary_key_or_a_hostile_card_address_is_not_found(client, campaign):
    world = campaign
    client.force_login(world.ann.user)
    entry = PoolEntry.objects.filter(collection=world.coll).order_by("pk").first()
    for ref in (entry.pk, 2**52, 2**52 + 5, 2**64):
        assert client.get(f"/c/{world.coll.slug}/judge/{ref}/").status_code == 404, ref
    ok = client.get(f"/c/{world.coll.slug}/judge/{selectors.pair_ref(entry.pk)}/")
    assert ok.status_code == 200


# --- the rules, case by case ---------------------------------------------------------------


@pytest.fixture
def setup():
    """Two queries × five documents pooled; two pairs of them (and one unpooled) are gold."""
    coll = factories.collection("mix")
    queries = [factories.query(coll, f"q{i}") for i in range(2)]
    docs = [factories.document(coll, f"d{i}") for i in range(5)]
    services.pool_add_ids(
        collection=coll, pairs=[(q.pk, d.pk) for q in queries for d in docs[:4]], source="run"
    )
    boss, usr = factories.user("boss"), factories.user("ann")
    factories.member(coll, boss, Role.COORDINATOR)
    factories.member(coll, usr, Role.JUDGE)
    gold = [(queries[0], docs[1]), (queries[1], docs[4])]  # the second was not pooled
    for q, d in gold:
        gold_services.gold_set(query=q, document=d, grade=2, actor=boss)
    return coll, boss, factories.human_judge(usr), gold


def _pair(entry: PoolEntry) -> tuple[int, int]:
    return entry.query_id, entry.document_id


def test_a_gold_pair_not_pooled_waits_for_the_next_pairs(setup):
    coll, _boss, _judge, gold = setup
    q, d = gold[1]
    assert not PoolEntry.objects.filter(query=q, document=d).exists()
    assert list(services.gold_waiting(collection=coll)) == [
        GoldPair.objects.get(query=q, document=d)
    ]
    extra = [factories.document(coll, f"e{i}") for i in range(9)]
    # nine new pairs: too few to carry a gold pair unseen
    assert (
        services.pool_add_ids(collection=coll, pairs=[(q.pk, e.pk) for e in extra], source="run")
        == 9
    )
    assert services.gold_waiting(collection=coll).exists()
    more = [factories.document(coll, f"f{i}") for i in range(10)]
    added = services.pool_add_ids(collection=coll, pairs=[(q.pk, e.pk) for e in more], source="run")
    assert added == 10  # the count is the caller's
    entry = PoolEntry.objects.get(query=q, document=d)
    batch = PoolEntry.objects.filter(added_at=entry.added_at)
    assert batch.count() == 11 and {e.source for e in batch} == {"run"}
    assert not services.gold_waiting(collection=coll).exists()


def test_pool_now_adds_it_at_once(setup):
    coll, boss, _judge, _gold = setup
    q, d = coll.queries.get(external_id="q0"), factories.document(coll, "late")
    gold_services.gold_set(query=q, document=d, grade=1, actor=boss, pool_now=True)
    assert PoolEntry.objects.get(query=q, document=d).source == PoolEntry.Source.MANUAL


def test_at_rate_one_gold_pairs_come_as_soon_as_the_query_allows(setup):
    coll, _boss, judge, gold = setup
    extra = [factories.document(coll, f"x{i}") for i in range(10)]
    services.pool_add_ids(
        collection=coll, pairs=[(gold[1][0].pk, e.pk) for e in extra], source="run"
    )  # the waiting gold pair joins these
    for q, d in gold:  # someone else closed both gold pairs
        other = factories.human_judge(factories.user(f"o{d.pk}"))
        services.judgment_record(judge=other, query=q, document=d, grade=2)
    gold_services.gold_rate_set(collection=coll, rate=1.0)
    wanted = {(q.pk, d.pk) for q, d in gold}
    served = []
    current = None
    while entry := selectors.next_pair(judge=judge, collection=coll, current_query_id=current):
        served.append(_pair(entry))
        services.judgment_record(judge=judge, query=entry.query, document=entry.document, grade=1)
        current = entry.query_id
    assert wanted <= set(served)
    queries = [q for q, _ in served]
    runs = [q for i, q in enumerate(queries) if i == 0 or queries[i - 1] != q]
    assert len(runs) == len(set(runs)) == 2  # each query once: gold pairs changed none
    for pair in wanted:  # each is the first card of its query
        i = served.index(pair)
        assert i == 0 or served[i - 1][0] != pair[0]


def test_the_rate_decides_each_time(setup, monkeypatch):
    coll, _boss, judge, gold = setup
    q, d = gold[0]
    other = factories.human_judge(factories.user("other"))
    services.judgment_record(judge=other, query=q, document=d, grade=2)  # closed
    gold_services.gold_rate_set(collection=coll, rate=0.25)
    on_q0 = {"judge": judge, "collection": coll, "current_query_id": q.pk}
    # on q0: one gold pair, three open pairs left: max(0.25, 1 / (1 + 3)) = 0.25
    monkeypatch.setattr(selectors._random, "random", lambda: 0.2)  # below it
    assert _pair(selectors.next_pair(**on_q0)) == (q.pk, d.pk)
    monkeypatch.setattr(selectors._random, "random", lambda: 0.3)  # above it
    ordinary = selectors.next_pair(**on_q0)
    assert _pair(ordinary) != (q.pk, d.pk) and ordinary.query_id == q.pk
    gold_services.gold_rate_set(collection=coll, rate=0.0)
    assert selectors.next_pair(**on_q0) == ordinary


def test_progress_counts_the_gold_pairs_still_to_come(setup):
    coll, _boss, judge, gold = setup
    q, d = gold[0]
    other = factories.human_judge(factories.user("other"))
    services.judgment_record(judge=other, query=q, document=d, grade=2)  # closed
    before = selectors.judge_progress(judge=judge, collection=coll)
    gold_services.gold_rate_set(collection=coll, rate=0.1)
    mixed = selectors.judge_progress(judge=judge, collection=coll)
    assert mixed.remaining == before.remaining + 1
    from judging.progress.selectors import progress_problems, progress_recount

    assert progress_recount(judge=judge, collection=coll) == mixed
    assert progress_problems(collection=coll) == []
    services.judgment_record(judge=judge, query=q, document=d, grade=2)
    after = selectors.judge_progress(judge=judge, collection=coll)
    assert (after.done, after.remaining) == (mixed.done + 1, mixed.remaining - 1)
    services.judgment_record(judge=judge, query=q, document=d, status=Judgment.Status.LATER)
    later = selectors.judge_progress(judge=judge, collection=coll)
    assert later.remaining == mixed.remaining  # "later" puts it back, as for any pair


def test_rate_and_marking_over_rest_and_the_page(client, setup):
    coll, boss, _judge, _gold = setup
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/gold/rate/"
    assert api.put(url, {"gold_rate": 0.1}, format="json").json() == {"gold_rate": 0.1}
    for bad in (-0.1, 1.5, "x", None):
        response = api.put(url, {"gold_rate": bad}, format="json")
        assert response.status_code == 400
        assert errors_of(response)[0]["field"] == "gold_rate"
    assert api.get(url).json() == {"gold_rate": 0.1}
    listed = api.get(f"/api/v1/collections/{coll.slug}/gold/").json()["results"]
    assert sorted(r["pooled"] for r in listed) == [False, True]
    late = factories.document(coll, "late")
    made = api.post(
        f"/api/v1/collections/{coll.slug}/gold/",
        {"qid": "q0", "docno": "late", "grade": 3, "pool_now": True},
        format="json",
    )
    assert made.status_code == 201 and made.json()["pooled"] is True
    assert "pool_now" not in made.json()
    assert PoolEntry.objects.filter(document=late).exists()
    client.force_login(boss)
    page = reverse("judging:gold_list", args=[coll.slug])
    assert client.post(page, {"percent": "20"}).status_code == 303
    coll.refresh_from_db()
    assert coll.gold_rate == 0.2
    assert client.post(page, {"percent": "120"}).status_code == 400
    shown = client.get(page + "?tab=pairs").content.decode()
    assert "waits for the next pairs" in shown
    for url in ("gold/", "gold/rate/", "judges/gold/"):
        judge_api = client_for(_judge_user(coll))
        assert judge_api.get(f"/api/v1/collections/{coll.slug}/{url}").status_code == 403


def _judge_user(coll):
    return Membership.objects.get(collection=coll, role=Role.JUDGE).user


def test_a_judge_is_told_their_standing_only_at_a_multiple_of_twenty(setup):
    coll, _boss, judge, gold = setup
    gold_services.qualification_set(collection=coll, pairs=1, share=1.0, confirm=True)
    q, d = gold[0]
    services.judgment_record(judge=judge, query=q, document=d, grade=2)  # qualifies at once
    assert judge.pk in quality_selectors.counted_judges(collection_id=coll.pk)
    assert judge.pk not in quality_selectors.counted_as_told(collection_id=coll.pk)
    extra = [factories.document(coll, f"t{i}") for i in range(qualification.SHOWN_EVERY)]
    for i, doc in enumerate(extra[: qualification.SHOWN_EVERY - 1]):
        services.judgment_record(judge=judge, query=q, document=doc, grade=i % 3)
        told = quality_selectors.counted_as_told(collection_id=coll.pk)
        assert (judge.pk in told) == (i + 2 >= qualification.SHOWN_EVERY), i
    # regrading the gold pair wrong costs the standing at once, and is told 20 pairs later
    services.judgment_record(judge=judge, query=q, document=d, grade=0)
    assert judge.pk not in quality_selectors.counted_judges(collection_id=coll.pk)
    assert judge.pk in quality_selectors.counted_as_told(collection_id=coll.pk)
