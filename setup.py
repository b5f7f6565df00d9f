"""Build the optional C reader of clean TREC text (the rest is configured in pyproject.toml).

``optional=True``: when the extension cannot be compiled (no C compiler), the install
still succeeds and the engine uses its numpy and Arrow readers instead.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "metrics.engine._ctrec",
            sources=["metrics/engine/_ctrec.c"],
            optional=True,
        )
    ]
)
