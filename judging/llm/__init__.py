"""LLM judges: prompt rendering, answer parsing, the HTTP client and the job runner.

:mod:`.prompt`, :mod:`.parse` and :mod:`.client` are free of Django; :mod:`.runner` ties
them to the judging services.
"""
