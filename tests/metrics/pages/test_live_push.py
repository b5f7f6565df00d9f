"""Open leaderboard and run pages follow the judgment list (issue 20 item 6).

The live part of each page polls with the token it was rendered with: 204 while nothing
it shows has changed, the page again (htmx swaps the live part in) once something has.
"""

from __future__ import annotations

import re

from django.urls import reverse

from metrics.models import Run
from tests.metrics import pages_factories as pf
from tests.metrics.pages.conftest import VERSION


def _token(html: str) -> str:
    match = re.search(r"hx-vals='\{&quot;live&quot;: &quot;([0-9a-f]{16})&quot;\}'", html)
    if match is None:
        match = re.search(r'hx-vals=\'\{"live": "([0-9a-f]{16})"\}\'', html)
    assert match, "the page has no live part"
    return match.group(1)


def _pages(world) -> list[str]:
    run = world.runs["a-bm25"]
    return [
        reverse("metrics:leaderboard", args=[world.coll.slug]) + "?sort=P@10",
        reverse("metrics:run_detail", args=[world.coll.slug, run.pk]),
    ]


def test_an_unchanged_page_answers_204_and_a_changed_one_the_page(world):
    alice = world.client("alice")
    for url in _pages(world):
        page = alice.get(url)
        html = page.content.decode()
        token = _token(html)
        assert 'id="live-part"' in html and 'hx-select="#live-part"' in html
        assert 'hx-trigger="every 2s"' in html
        join = "&" if "?" in url else "?"
        assert alice.get(f"{url}{join}live={token}").status_code == 204
        pf.bump_version(world.coll, world.coll.judgments_version + 1)  # a judgment changed
        changed = alice.get(f"{url}{join}live={token}")
        assert changed.status_code == 200 and _token(changed.content.decode()) != token


def test_the_token_follows_what_the_viewer_sees(world, django_assert_max_num_queries):
    alice, url = world.client("alice"), _pages(world)[0]
    token = _token(alice.get(url).content.decode())
    with django_assert_max_num_queries(7):  # session, user, collection, roles, one aggregate
        assert alice.get(f"{url}&live={token}").status_code == 204
    # Another team's new run is invisible to alice until the leaderboard is published.
    other = pf.run(world.coll, world.team_b, "b-new", per_query={})
    assert alice.get(f"{url}&live={token}").status_code == 204
    world.coll.leaderboard_published = True
    world.coll.save(update_fields=["leaderboard_published"])
    assert alice.get(f"{url}&live={token}").status_code == 200
    published = _token(alice.get(url).content.decode())
    Run.objects.filter(pk=other.pk).update(scored_version=VERSION + 3)  # rescored
    assert alice.get(f"{url}&live={published}").status_code == 200


def test_a_stale_or_foreign_token_gets_the_page(world):
    alice, url = world.client("alice"), _pages(world)[0]
    for token in ("0" * 16, "x", "<script>"):
        response = alice.get(url, {"live": token, "sort": "P@10"})
        assert response.status_code == 200 and b'<script>"' not in response.content
