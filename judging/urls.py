"""Judging pages."""


app_name = "judging"
urlpatterns: list = []
