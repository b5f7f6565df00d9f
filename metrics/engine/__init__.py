"""Graded's pure evaluation engine (numpy + pyarrow; no Django anywhere in this package).

File level::

    from metrics.engine import evaluate, read_qrels, read_run
    result = evaluate("qrels.txt", "run.txt", ["ndcg_cut.10", "nDCG(gain=exp)@10", "map"])
    result.aggregates, result.per_query, result.ignored_queries

Array level (what the web app uses for stored rankings)::

    from metrics.engine import evaluate_ranked, required_depth
    evaluate_ranked(ranked_labels, n_ret, judged_labels, ["nDCG@10", "P@10"])

See ``docs/measures.md`` for every measure name and flavour.
"""

from metrics.engine.core import (
    JudgedPool,
    discounts,
    evaluate_ranked,
    gain_function,
    zero_omitted,
)
from metrics.engine.errors import EngineInputError, InputError, MeasureError
from metrics.engine.evaluation import Evaluation, evaluate, evaluate_many
from metrics.engine.io import Qrels, Run, read_qrels, read_run
from metrics.engine.measures import (
    Measure,
    measure_info,
    parse_measure,
    parse_measures,
    required_depth,
)

__all__ = [
    "EngineInputError",
    "Evaluation",
    "InputError",
    "JudgedPool",
    "Measure",
    "MeasureError",
    "Qrels",
    "Run",
    "discounts",
    "evaluate",
    "evaluate_many",
    "evaluate_ranked",
    "gain_function",
    "measure_info",
    "parse_measure",
    "parse_measures",
    "read_qrels",
    "read_run",
    "required_depth",
    "zero_omitted",
]
