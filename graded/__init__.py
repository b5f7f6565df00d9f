"""Code shared below both apps: ``config``, ``judging`` and ``metrics`` import it.

It imports none of them (tests/test_architecture.py checks), and no Django: pure Python.
"""
