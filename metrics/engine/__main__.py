"""``python -m metrics.engine QRELS RUN -m MEASURE``: the command line, without Django."""

from .cli import main

raise SystemExit(main())
