"""Scheduled evaluations of search configurations, and alerts that know noise (issue 42)."""
