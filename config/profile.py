"""The user's profile page: create, regenerate and revoke the personal API token.

A new token's key is shown once, on the page the creating POST redirects to (it is kept
in the session only until then); afterwards only its first characters are shown.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token

#: Characters of an existing key shown on the page, enough to tell tokens apart.
KEY_PREFIX_LENGTH = 6
_NEW_KEY = "profile_new_token_key"


@transaction.atomic
def token_create(*, user: AbstractBaseUser) -> Token:
    """Create the user's API token, replacing (and so revoking) any previous one."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


@transaction.atomic
def token_revoke(*, user: AbstractBaseUser) -> None:
    """Delete the user's API token, if any; requests sending it then get 401."""
    Token.objects.filter(user=user).delete()


def _see_other(url: str) -> HttpResponseRedirect:
    """Return a 303 redirect, the right answer to a successful POST."""
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def profile(request: HttpRequest) -> HttpResponse:
    """Show the user's API token state; POST ``action=create`` or ``action=revoke``."""
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            token = token_create(user=request.user)
            request.session[_NEW_KEY] = token.key
            messages.success(request, "New API token created. Copy it now: it is shown once.")
        elif action == "revoke":
            token_revoke(user=request.user)
            messages.success(request, "API token revoked.")
        else:
            messages.error(request, "Unknown action.")
        return _see_other(reverse("profile"))
    token = Token.objects.filter(user=request.user).first()
    new_key = request.session.pop(_NEW_KEY, None)
    context = {
        "token": token,
        "new_key": new_key if token is not None and new_key == token.key else None,
        "key_prefix": token.key[:KEY_PREFIX_LENGTH] if token is not None else "",
    }
    return render(request, "account/profile.html", context)
