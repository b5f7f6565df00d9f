"""REST API of the metrics app: runs, scores, leaderboard and teams (``/api/v1/``)."""
