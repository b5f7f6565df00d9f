"""The demo collection: hand-written home & garden search content, its loader and run files.

``python manage.py load_demo`` loads it (see :mod:`judging.demo.loader`); the runs and
reference qrels in the repository's ``demo/`` folder are written by
:mod:`judging.demo.make_runs` from the same content.
"""
