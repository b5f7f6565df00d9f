"""Metrics data model (teams, runs, scores) — see issue 'part 3'."""
