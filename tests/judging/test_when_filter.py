"""``|when`` (judging/templatetags/when.py): one ``<time>`` token a moment, no database."""

from __future__ import annotations

import datetime as dt

import pytest
from django.template import Context, Template
from django.test import override_settings


def render(source: str, **context) -> str:
    return Template("{% load when %}" + source).render(Context(context))


@override_settings(USE_TZ=True, TIME_ZONE="Europe/Helsinki")
def test_a_moment_is_shown_in_the_sites_time_and_dated_in_iso():
    moment = dt.datetime(2026, 12, 2, 12, 30, 5, tzinfo=dt.UTC)
    assert render("{{ m|when }}", m=moment) == (
        '<time datetime="2026-12-02T14:30:05+02:00">2026-12-02 14:30</time>'
    )
    assert render('{{ m|when:"s" }}', m=moment).endswith(">2026-12-02 14:30:05</time>")


@pytest.mark.parametrize(("value", "shown"), [(None, ""), ("", "")])
def test_nothing_is_shown_for_no_moment(value, shown):
    assert render("{{ m|when }}", m=value) == shown


def test_a_day_and_hostile_text_around_it_stay_escaped():
    assert render('{{ d|when:"day" }}', d=dt.date(2026, 1, 31)) == (
        '<time datetime="2026-01-31">2026-01-31</time>'
    )
    assert "<b>" not in render('{{ x }} {{ d|when:"day" }}', x="<b>", d=dt.date(2026, 1, 31))
