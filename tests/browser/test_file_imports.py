"""A large upload on Import files is followed on its own page, on a desktop and a phone."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import FileImport, Query
from tests.browser.test_runs import log_in, runs_world
from tests.browser.test_upload_errors import viewport_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["runs_world", "viewport_page"]


def test_a_background_import_is_followed_to_its_outcome(
    viewport_page, console, runs_world, settings
):
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 10  # every upload goes to the worker
    page = viewport_page
    coll = runs_world["coll"]
    log_in(page, reverse("judging:collection_import", args=[coll.slug]), "cora")
    topics = "".join(f"t{n}\ttopic number {n}\n" for n in range(3)).encode()
    page.set_input_files(
        "input[name=topics]",
        files=[{"name": "topics.tsv", "mimeType": "text/plain", "buffer": topics}],
    )
    page.click("button:has-text('Import')")
    page.wait_for_url(re.compile(r"/imports/\d+/$"))
    job = FileImport.objects.get()
    expect(page.locator("h1")).to_have_text(f"Import {job.pk}: Done")
    expect(page.locator("[role=status]").last).to_contain_text("topics: 3 new, 0 updated")
    expect(page.locator("progress")).to_have_attribute("value", str(len(topics)))
    assert Query.objects.filter(collection=coll, external_id__startswith="t").count() == 3
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert console.problems() == []
