"""The collection's one-of-a-kind settings share one base view: GET plus one write method."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from judging.api.views import CollectionSettingView
from judging.models import Membership
from tests import factories
from tests.api_client import client_for


def _setting_views() -> dict[str, type[CollectionSettingView]]:
    """Return the routes whose view is a CollectionSettingView, with the view."""
    found: dict[str, type[CollectionSettingView]] = {}

    def walk(patterns: list, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                view = getattr(pattern.callback, "cls", None)
                if isinstance(view, type) and issubclass(view, CollectionSettingView):
                    found[prefix + str(pattern.pattern)] = view

    walk(get_resolver().url_patterns, "")
    return found


def test_each_setting_view_routes_get_and_its_one_write_method():
    views = _setting_views()
    assert {route.split("/")[-2]: v.write_method for route, v in views.items()} == {
        "guidelines": "put",
        "aggregation": "patch",
        "pooling": "patch",
        "score-visibility": "patch",
        "settings": "patch",
        "rate": "put",  # gold/rate/
        "qualification": "put",  # gold/qualification/
    }
    for view in views.values():
        allowed = view().allowed_methods
        assert set(allowed) == {"GET", view.write_method.upper(), "OPTIONS"}, view


def test_a_write_method_other_than_put_or_patch_is_refused():
    with pytest.raises(TypeError, match="write_method"):

        class Wrong(CollectionSettingView):
            write_method = "delete"
            role_rules: ClassVar[dict[str, Any]] = {}


@pytest.mark.django_db
def test_the_other_write_method_is_405_and_a_bad_body_writes_nothing(coll):
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    api = client_for(cora)
    base = f"/api/v1/collections/{coll.slug}"
    assert api.patch(f"{base}/guidelines/", {"guidelines": "x"}, format="json").status_code == 405
    assert api.put(f"{base}/pooling/", {"strategy": "depth"}, format="json").status_code == 405
    before = api.get(f"{base}/guidelines/").json()
    refused = api.put(f"{base}/guidelines/", {"guidelines": "x" * 10**6}, format="json")
    assert refused.status_code == 400 and "guidelines" in refused.content.decode()
    assert api.get(f"{base}/guidelines/").json() == before
    changed = api.put(f"{base}/guidelines/", {"guidelines": "Judge topicality."}, format="json")
    assert changed.status_code == 200
    assert changed.json() == {"version": before["version"] + 1, "guidelines": "Judge topicality."}
