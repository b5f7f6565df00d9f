"""The demo collection: hand-written home & garden search content, its loader and run files.

The content is data, in the repository's ``demo/`` folder: ``topics.trec`` (TREC topics),
``documents.jsonl`` and ``qrels-reference.txt``. ``python manage.py load_demo`` imports it
through the same importers users' files go through (see :mod:`judging.demo.loader`); the
runs in ``demo/runs/`` are written by :mod:`judging.demo.make_runs` from the same content.
"""
