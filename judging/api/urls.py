"""Judging API routes."""

app_name = "judging-api"
urlpatterns: list = []
