"""Run a queued check of an LLM judge (canaries or a version) in the background.

The task (:mod:`judging.quality.tasks`) calls :func:`run_check`: it claims the check,
asks the judge outside any transaction through the same path as *Try* and LLM jobs (the
provider's egress policy, key, budgets and decoding; one attempt per pair, as *Try*), in
batches of :data:`CHECK_BATCH` with :data:`CHECK_CONCURRENCY` requests in flight, and
records the outcome at once. The check fails, with a reason a coordinator can act on,
when

- the judge cannot run any more (provider, model, key, or budget: the message of the
  refusal);
- :func:`judging.llm.runner.fail_fast_after` fatal answers come in a row (a wrong key,
  model or base URL, a destination the egress guard refuses: the reason of an LLM job
  stopped the same way, :func:`judging.llm.runner.stop_reason`); the batches left are
  not sent;
- every request failed without an answer (fewer than that many fatal ones, or
  retryable faults): ``All N requests failed at <provider>: <commonest reason>``, as for
  an LLM job whose every pair failed.

An answer the judge gave but that holds no readable grade is a result, not a failure
(the rates count it as unreadable), as before checks ran in the background.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from django.core.exceptions import ValidationError

from judging.llm import runner
from judging.quality import services
from judging.quality.models import CanaryCheck, QualityCheck, VersionCheck

logger = logging.getLogger(__name__)

#: Pairs asked per batch (each batch is reserved against the budgets at once, as a try).
CHECK_BATCH = 10
#: Requests in flight at once: with every answer fatal, at most ``fail_fast + 3`` go out.
CHECK_CONCURRENCY = 4


class CheckFailed(Exception):
    """The check cannot give results: the message says why."""


def run_check(kind: str, check_id: int) -> QualityCheck | None:
    """Run the queued check ``check_id`` of ``kind`` (``canary`` or ``version``); return it.

    Nothing happens when the check does not exist or another worker has it (a duplicate
    delivery). An unexpected error fails the check (``Stopped: <error type>.``) and is
    raised again for the worker's log.
    """
    model = services.CHECK_KINDS[kind]
    check = (
        model.objects.select_related("judge__llm_provider", "collection", "created_by")
        .filter(pk=check_id)
        .first()
    )
    if check is None or not services.check_claim(check=check):
        return check
    try:
        if isinstance(check, CanaryCheck):
            _run_canaries(check)
        else:
            _run_version(check)
    except (CheckFailed, ValidationError) as exc:
        message = "; ".join(getattr(exc, "messages", None) or [str(exc)])
        logger.info("%s check %s failed: %s", kind, check.pk, message)
        services.check_fail(check=check, error=message)
    except Exception as exc:
        services.check_fail(check=check, error=f"Stopped: {exc.__class__.__name__}.")
        raise
    return check


def ask(check: QualityCheck, pairs: Sequence[runner.Pair]) -> list[runner.Trial]:
    """Ask the check's judge about ``pairs`` in batches; raise :class:`CheckFailed` as above."""
    trials: list[runner.Trial] = []
    for start in range(0, len(pairs), CHECK_BATCH):
        asked = runner.ask_judge(
            check.judge,
            list(pairs[start : start + CHECK_BATCH]),
            collection=check.collection,
            user=check.created_by,
            concurrency=CHECK_CONCURRENCY,
            fail_fast=runner.fail_fast_after(),
        )
        trials.extend(asked.trials)
        if asked.halt_reason:
            raise CheckFailed(asked.halt_reason)
    if pairs and len(trials) == len(pairs) and all(t.call_failed for t in trials):
        commonest, _ = Counter(t.problem for t in trials).most_common(1)[0]
        provider = check.judge.llm_provider
        where = f" at {provider.name}" if provider is not None else ""
        raise CheckFailed(f"All {len(trials)} requests failed{where}: {commonest}")
    return trials


def _run_canaries(check: CanaryCheck) -> None:
    made, pairs = services.canary_pairs(check.collection, queries=check.queries, seed=check.seed)
    if not pairs:
        raise CheckFailed("The collection has no query to make canaries for.")
    trials = ask(check, pairs)
    services.canary_check_finish(check=check, made=made, pairs=pairs, trials=trials)


def _run_version(check: VersionCheck) -> None:
    pairs, gold = services.version_check_pairs(check.collection)
    if not pairs:
        raise CheckFailed(services.NOTHING_TO_CHECK)
    asked = services.version_requests(pairs)
    trials = ask(check, asked)
    services.version_check_finish(check=check, asked=asked, trials=trials, gold=gold)
