"""previous_entry_id looks at the judge's latest judgments first, then at all of them."""

from __future__ import annotations

import pytest

from judging import selectors, services
from judging.models import Judgment
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("window", [1, 3, 64])
def test_unpooled_judgments_beyond_the_window_are_passed_over(monkeypatch, window):
    """Pooled, then more unpooled judgments than the window holds: the pooled one is found."""
    monkeypatch.setattr(selectors, "_PREVIOUS_WINDOW", window)
    coll = factories.collection()
    judge = factories.human_judge(factories.user())
    q = factories.query(coll)
    pooled = [factories.document(coll) for _ in range(2)]
    entries = [factories.pool_entry(coll, q, d) for d in pooled]
    for d in pooled:
        services.judgment_record(judge=judge, query=q, document=d, grade=2)
    for _ in range(5):  # judged over the API: not in the pool
        services.judgment_record(judge=judge, query=q, document=factories.document(coll), grade=1)
    judgments = list(Judgment.objects.filter(judge=judge).order_by("created_at", "pk"))
    assert selectors.previous_entry_id(judge=judge, collection=coll, before=None) == entries[1].pk
    for before in judgments:
        kwargs = {"judge": judge, "collection": coll, "before": before}
        got = selectors.previous_entry_id(**kwargs)
        assert got == selectors.previous_entry_id_reference(**kwargs)
    assert (
        selectors.previous_entry_id(judge=judge, collection=coll, before=judgments[1])
        == entries[0].pk
    )
    assert selectors.previous_entry_id(judge=judge, collection=coll, before=judgments[0]) is None


def test_a_judge_without_judgments_has_no_previous_pair():
    coll = factories.collection()
    judge = factories.human_judge(factories.user())
    assert selectors.previous_entry_id(judge=judge, collection=coll, before=None) is None
