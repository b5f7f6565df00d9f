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

from metrics import services
from metrics.engine import MeasureError
from metrics.live import scoring
from tests import factories
from tests.metrics.live.test_live_equals_cli import assert_live_equals_cli, scored_collection

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
    coll, files = scored_collection(rng, f"trec{seed}", NEW_MEASURES, runs=(2, 3))
    assert assert_live_equals_cli(coll, files, NEW_MEASURES, tmp_path) > 50
