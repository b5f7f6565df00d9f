#!/usr/bin/env python
"""Run Django administrative tasks for Graded."""

import os
import sys


def main() -> None:
    """Run the management command named on the command line."""
    if sys.argv[1:2] == ["evaluate"]:
        # Evaluating files needs neither settings nor a database: skip Django's start-up
        # (about 0.8 s) and run the same command line the management command wraps.
        from metrics.engine.cli import main as evaluate

        raise SystemExit(evaluate(sys.argv[2:], prog="manage.py evaluate"))
    if sys.argv[1:2] == ["pooling_simulate"]:
        # Replaying pooling reads files only: like ``evaluate`` it needs no settings (and so
        # no SECRET_KEY) and no database; run the command without setting Django up.
        from metrics.management.commands.pooling_simulate import Command

        Command().run_from_argv(sys.argv)
        return
    # Production settings unless told otherwise, like WSGI, ASGI and the Celery worker;
    # development is opt-in: DJANGO_SETTINGS_MODULE=config.settings.dev (make run sets it).
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
