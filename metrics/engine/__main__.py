"""``python -m metrics.engine QRELS RUN -m MEASURE``: the command line, without Django."""

from metrics.engine.cli import main

raise SystemExit(main())
