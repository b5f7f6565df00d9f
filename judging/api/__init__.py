"""REST API of the judging app (``/api/v1/``)."""
