"""Every coordinator tool is one click from the collection page (issue 41, item 6).

Walks the URL patterns: every page of a collection that takes only its short name and
answers a coordinator's GET is linked from the collection page's overview, except the
ones listed here with the reason.
"""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from judging.models import Membership
from tests import factories

pytestmark = pytest.mark.django_db

#: Collection pages not linked from the tools, and why.
NOT_TOOLS = {
    "judging:collection_detail": "the page itself",
    "judging:judge_next": "the primary action (a coordinator who judges gets it there)",
    "judging:judge_undo": "a POST of the judging card",
    "judging:judge_create": "reached from Run LLM judge, where judges are configured",
    "metrics:stability": "a fragment the Stability tab loads",
    "judging:judgment_list_download": "a file, linked once per format",
    "judging:judgment_list": "a judge's own labels: linked when the coordinator judges",
}


def collection_pages() -> list[str]:
    """Return the names of the URL patterns that take exactly the collection's slug."""
    found = []

    def walk(resolver: URLResolver, namespace: str) -> None:
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                walk(entry, entry.namespace or namespace)
            elif isinstance(entry, URLPattern) and entry.name:
                pattern = str(entry.pattern)
                if pattern.startswith("c/<slug:slug>/") and pattern.count("<") == 1:
                    found.append(f"{namespace}:{entry.name}")

    walk(get_resolver(), "")
    return sorted(set(found))


def test_every_collection_page_is_one_click_from_the_collection_page(client):
    coll = factories.collection("tools")
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    client.force_login(boss)
    html = client.get(reverse("judging:collection_detail", args=[coll.slug])).content.decode()
    names = collection_pages()
    assert "judging:gold_list" in names and "metrics:search" in names  # the walk finds them
    missing = [
        name
        for name in names
        if name not in NOT_TOOLS and f'href="{reverse(name, args=[coll.slug])}"' not in html
    ]
    assert missing == []
    assert set(NOT_TOOLS) <= set(names)  # no stale exception
