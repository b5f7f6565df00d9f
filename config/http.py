"""HTTP helpers shared by the apps' views."""

from __future__ import annotations

from django.http import HttpResponseRedirect


def see_other(url: str) -> HttpResponseRedirect:
    """Return a 303 redirect, the right answer to a successful POST."""
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response
