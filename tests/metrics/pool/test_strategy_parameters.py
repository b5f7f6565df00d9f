"""The settings page shows each strategy's parameters: every strategy must say which it reads."""

from __future__ import annotations

from metrics.pool.forms import PARAMETERS, PoolingPolicyForm
from metrics.pool.models import STRATEGY_CHOICES


def test_every_strategy_names_the_parameters_it_reads():
    assert set(PARAMETERS) == {name for name, _label in STRATEGY_CHOICES}
    fields = set(PoolingPolicyForm().fields) - {"strategy"}
    for strategy, names in PARAMETERS.items():
        assert set(names) <= fields, strategy


def test_the_stylesheet_hides_the_other_strategies_parameters_for_every_strategy():
    """Each strategy needs its own rule in ui.css, or choosing it shows every parameter."""
    from pathlib import Path

    css = (Path(__file__).resolve().parents[3] / "static" / "css" / "ui.css").read_text()
    for strategy, _label in STRATEGY_CHOICES:
        rule = (
            f'#pooling-policy:has(option[value="{strategy}"]:checked) '
            f'[data-for]:not([data-for~="{strategy}"])'
        )
        assert rule in css, strategy
