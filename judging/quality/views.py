"""The *Judges* page: who may need a word, from the signals of attention."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from judging import selectors
from judging.models import Membership
from judging.quality import attention
from judging.quality import selectors as selectors_quality


@login_required
@require_GET
def judge_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Show coordinators every judge's attention signals, flagged judges first."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    rows = selectors_quality.judge_attention(collection=collection)
    return render(
        request,
        "judging/judge_list.html",
        {
            "collection": collection,
            "rows": rows,
            "flagged": sum(1 for row in rows if row.signals.flags),
            "min_labels": attention.MIN_LABELS,
            "z_flag": attention.Z_FLAG,
        },
    )
