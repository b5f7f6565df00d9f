"""The API documentation page works under the Content-Security-Policy, with no CDN."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def test_swagger_page_uses_only_local_assets(client, django_user_model):
    user = django_user_model.objects.create_user("reader", password="pw")
    client.force_login(user)
    page = client.get("/api/v1/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources, "the page loads its assets"
    assert all(not s.startswith(("http://", "https://", "//")) for s in sources), sources
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>\s*\S", html), "no inline script"
    script = next(s for s in sources if "swagger" in s.lower() and s.endswith((".js", "js")))
    assert client.get(script).status_code == 200


def test_schema_is_served(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("reader", password="pw"))
    schema = client.get("/api/v1/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/collections/{slug}/judgments/" in schema.content
