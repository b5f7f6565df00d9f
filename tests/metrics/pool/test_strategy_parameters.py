"""The settings page shows each strategy's parameters: every strategy must say which it reads."""

from __future__ import annotations

from metrics.pool.forms import PARAMETERS, PoolingPolicyForm
from metrics.pool.models import STRATEGY_CHOICES


def test_every_strategy_names_the_parameters_it_reads():
    assert set(PARAMETERS) == {name for name, _label in STRATEGY_CHOICES}
    fields = set(PoolingPolicyForm().fields) - {"strategy"}
    for strategy, names in PARAMETERS.items():
        assert set(names) <= fields, strategy
