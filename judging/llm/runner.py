"""Run an LLM judge over a collection's pool: the engine behind the command, REST and UI.

HTTP requests run on an asyncio loop in a helper thread (``concurrency`` in flight, see
:mod:`judging.llm.client`); answers come back over a queue to the calling thread, which
parses them and writes each batch through :func:`judging.llm.services.llm_batch_record`,
so database work stays on one connection and the live list changes once per batch.
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import logging
import queue
import re
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import certifi
import httpx
import nh3
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Q

from judging.llm import egress, parse, prompt
from judging.llm import services as services_llm
from judging.llm.client import CallFailed, ClientConfig, Completion, complete
from judging.llm.models import LLMJob
from judging.llm.services import LLMGrade, LLMPairFailure
from judging.models import Judge, Judgment, PoolEntry
from judging.rendering import looks_like_html

logger = logging.getLogger(__name__)

_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


@dataclass(frozen=True)
class Pair:
    """One pooled pair with everything a prompt may need."""

    query_id: int
    document_id: int
    values: dict[str, str]


@dataclass
class Progress:
    """Where a running job is, for progress bars."""

    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    tokens: int = 0
    started: float = 0.0

    @property
    def rate(self) -> float:
        """Return pairs with an outcome per second so far."""
        elapsed = time.monotonic() - self.started
        return (self.done + self.failed) / elapsed if elapsed > 0 else 0.0


def plain_text(body: str) -> str:
    """Return a document body as plain text (HTML tags dropped, entities decoded)."""
    body = (body or "").replace("\r\n", "\n")
    if looks_like_html(body):
        body = html.unescape(nh3.clean(body, tags=set()))
    body = _SPACES.sub(" ", body)
    return _BLANK_LINES.sub("\n\n", body).strip()


def job_pairs(job: LLMJob) -> tuple[list[Pair], int]:
    """Return the pairs ``job`` should judge and how many in scope it skips.

    Skipped are pairs the judge has already graded and id-only documents (no text to
    judge). Failed pairs of earlier jobs have no judgment, so they come back.
    """
    entries = PoolEntry.objects.filter(collection=job.collection)
    wanted = job.options.get("queries") or []
    if wanted:
        entries = entries.filter(query__external_id__in=wanted)
    graded = Judgment.objects.filter(
        judge=job.judge,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
        status=Judgment.Status.GRADED,
    )
    entries = entries.annotate(graded=Exists(graded))
    pending = entries.filter(graded=False, document__has_content=True).order_by(
        "query__external_id", "document__external_id"
    )
    limit = job.options.get("limit")
    if limit:
        pending = pending[:limit]
    skipped = entries.filter(Q(graded=True) | Q(document__has_content=False)).count()
    return _pairs(pending), skipped


def _pairs(entries: Any) -> list[Pair]:
    """Return the pool entries of a queryset as :class:`Pair` s with their prompt values."""
    rows = entries.values_list(
        "query_id",
        "document_id",
        "query__external_id",
        "query__text",
        "query__description",
        "query__narrative",
        "document__external_id",
        "document__title",
        "document__body",
    )
    return [
        Pair(
            query_id=q,
            document_id=d,
            values={
                "qid": qid,
                "query": text,
                "description": description,
                "narrative": narrative,
                "docno": docno,
                "title": title,
                "document": plain_text(body),
            },
        )
        for q, d, qid, text, description, narrative, docno, title, body in rows
    ]


def client_config(judge: Judge, api_key: str) -> ClientConfig:
    """Return the client settings of ``judge`` (backoff from the GRADED_LLM_* settings)."""
    return ClientConfig(
        endpoint=judge.llm_provider.base_url,
        model=judge.model,
        api_key=api_key or None,
        decoding=dict(judge.decoding or {}),
        json_mode=judge.json_mode,
        timeout=judge.timeout_seconds,
        max_attempts=judge.max_attempts,
        backoff_base=float(getattr(settings, "GRADED_LLM_BACKOFF_BASE", 0.5)),
        backoff_cap=float(getattr(settings, "GRADED_LLM_BACKOFF_CAP", 30.0)),
    )


class _Requests(threading.Thread):
    """Send every pair's request from an asyncio loop; put outcomes on a queue."""

    END = object()

    def __init__(
        self,
        *,
        pairs: list[Pair],
        judge: Judge,
        config: ClientConfig,
        concurrency: int,
        out: queue.Queue,
    ) -> None:
        super().__init__(name="llm-judge-requests", daemon=True)
        self.pairs, self.config, self.concurrency, self.out = pairs, config, concurrency, out
        self.template = judge.prompt_template or prompt.DEFAULT_TEMPLATE
        self.system = judge.system_prompt
        self.policy = judge.llm_provider.egress_policy()
        self.stop = threading.Event()

    def run(self) -> None:
        """Run the loop to completion, then signal the end."""
        try:
            asyncio.run(self._main())
        finally:
            self.out.put(self.END)

    async def _main(self) -> None:
        # One client with one keep-alive connection per worker: httpcore's pool scans all
        # its connections on every request, so N small pools cost less CPU than one of N.
        pending: Iterator[Pair] = iter(self.pairs)
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        tls = ssl.create_default_context(cafile=certifi.where())  # loaded once, shared

        async def worker() -> None:
            async with egress.guarded_client(self.policy, verify=tls, limits=limits) as client:
                for pair in pending:
                    if self.stop.is_set():
                        return
                    self.out.put(await self._one(client, pair))

        await asyncio.gather(*(worker() for _ in range(self.concurrency)))

    async def _one(
        self, client: httpx.AsyncClient, pair: Pair
    ) -> tuple[Pair, str, Completion | CallFailed]:
        user = prompt.render(self.template, pair.values)
        messages = [{"role": "user", "content": user}]
        if self.system:
            messages.insert(0, {"role": "system", "content": self.system})
        size = len(user) + len(self.system)
        if size > prompt.MAX_PROMPT_CHARS:
            failed = CallFailed(
                f"The prompt as rendered is {size:,} characters; at most "
                f"{prompt.MAX_PROMPT_CHARS:,} are sent (nothing was sent).",
                attempts=0,
            )
            return pair, prompt.prompt_hash(self.system, user), failed
        try:
            outcome: Completion | CallFailed = await complete(client, self.config, messages)
        except CallFailed as exc:
            outcome = exc
        except Exception as exc:
            outcome = CallFailed(f"Unexpected error ({exc.__class__.__name__}).")
        return pair, prompt.prompt_hash(self.system, user), outcome


def _outcome(
    judge: Judge, pair: Pair, digest: str, version: str, result: Completion | CallFailed
) -> LLMGrade | LLMPairFailure:
    """Turn one answer into a grade to record, or a failure."""
    if isinstance(result, CallFailed):
        return LLMPairFailure(
            query_id=pair.query_id,
            document_id=pair.document_id,
            reason=result.reason,
            raw_answer=result.raw,
            attempts=result.attempts,
        )
    try:
        label, grade = parse.parse_answer(
            result.content,
            native_scale=judge.native_scale or [],
            mapping=judge.scale_mapping or {},
            pattern=judge.answer_pattern,
        )
    except (parse.AnswerError, ValueError) as exc:
        return LLMPairFailure(
            query_id=pair.query_id,
            document_id=pair.document_id,
            reason=str(exc),
            raw_answer=result.content,
            attempts=result.attempts,
        )
    return LLMGrade(
        query_external_id=pair.values["qid"],
        document_external_id=pair.values["docno"],
        grade=grade,
        native_label=label,
        raw_output=result.content,
        prompt_hash=digest,
        template_version=version,
        model_reported=result.model,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        latency_ms=result.latency_ms,
        attempts=result.attempts,
    )


def run_job(
    job: LLMJob,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    batch_size: int = 100,
    flush_seconds: float = 1.0,
) -> LLMJob:
    """Run ``job`` to the end and return it refreshed.

    A judge that cannot run (no provider, a model the provider does not allow, its key
    variable unset) fails the job before any
    request, with the reason in ``job.error``. Pairs are recorded in batches of at most
    ``batch_size`` or every ``flush_seconds``, each batch atomically.
    """
    judge = job.judge
    try:
        services_llm.check_runnable(judge)
        api_key = services_llm.api_key_for(judge)
        template = judge.prompt_template or prompt.DEFAULT_TEMPLATE
        prompt.check_template(template)
        parse.compile_pattern(judge.answer_pattern)
    except (ValidationError, ValueError) as exc:
        message = "; ".join(getattr(exc, "messages", None) or [str(exc)])
        services_llm.llm_job_set_status(job=job, status=LLMJob.Status.FAILED, error=message)
        return job
    pairs, skipped = job_pairs(job)
    services_llm.llm_job_set_status(
        job=job, status=LLMJob.Status.RUNNING, total=len(pairs), skipped=skipped
    )
    progress = Progress(total=len(pairs), skipped=skipped, started=time.monotonic())
    version = prompt.template_version(template, judge.prompt_version)
    concurrency = max(1, int(job.options.get("concurrency") or 4))
    out: queue.Queue = queue.Queue()
    requests = _Requests(
        pairs=pairs,
        judge=judge,
        config=client_config(judge, api_key),
        concurrency=concurrency,
        out=out,
    )
    grades: list[LLMGrade] = []
    failures: list[LLMPairFailure] = []
    last_flush = time.monotonic()

    def flush() -> None:
        nonlocal last_flush
        if grades or failures:
            services_llm.llm_batch_record(job=job, grades=grades, failures=failures)
            grades.clear()
            failures.clear()
        last_flush = time.monotonic()

    if on_progress:
        on_progress(progress)
    requests.start()
    try:
        while True:
            try:
                item = out.get(timeout=flush_seconds)
            except queue.Empty:
                flush()
                continue
            if item is _Requests.END:
                break
            pair, digest, result = item
            outcome = _outcome(judge, pair, digest, version, result)
            if isinstance(outcome, LLMGrade):
                grades.append(outcome)
                progress.done += 1
                progress.tokens += (outcome.prompt_tokens or 0) + (outcome.completion_tokens or 0)
            else:
                failures.append(outcome)
                progress.failed += 1
                logger.info(
                    "LLM judge %s failed on pair %s/%s: %s",
                    judge.pk,
                    pair.values["qid"],
                    pair.values["docno"],
                    outcome.reason,
                )
            if len(grades) + len(failures) >= batch_size or (
                time.monotonic() - last_flush >= flush_seconds
            ):
                flush()
            if on_progress:
                on_progress(progress)
        flush()
    except BaseException as exc:
        requests.stop.set()
        services_llm.llm_job_set_status(
            job=job, status=LLMJob.Status.FAILED, error=f"Stopped: {exc.__class__.__name__}."
        )
        raise
    finally:
        requests.join(timeout=60)
    services_llm.llm_job_finish(job=job)
    job.refresh_from_db()
    if on_progress:
        on_progress(progress)
    return job


#: Pairs a coordinator tries a judge on before running it, and the longest wait per pair.
TRY_PAIRS = 3
TRY_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Trial:
    """One try of an LLM judge on a pair: the prompt as sent, the answer, what it parses to."""

    qid: str
    docno: str
    system: str
    prompt: str
    raw_answer: str
    label: str = ""
    grade: int | None = None
    problem: str = ""


def trial_pairs(*, collection: Any, count: int = TRY_PAIRS) -> list[Pair]:
    """Return the first ``count`` pooled pairs with text (by query, then document id)."""
    entries = PoolEntry.objects.filter(collection=collection, document__has_content=True)
    return _pairs(entries.order_by("query__external_id", "document__external_id")[:count])


def try_judge(judge: Judge, pairs: list[Pair]) -> list[Trial]:
    """Ask ``judge`` about ``pairs`` once each and return what happened; record nothing.

    The same request path as a job (the provider's egress policy, key and decoding), with
    one attempt per pair and the pairs asked at once, so the page waits at most
    :data:`TRY_TIMEOUT_SECONDS`. Raises
    ``ValidationError`` when the judge cannot run at all.
    """
    services_llm.check_runnable(judge)
    api_key = services_llm.api_key_for(judge)
    template = judge.prompt_template or prompt.DEFAULT_TEMPLATE
    prompt.check_template(template)
    config = dataclasses.replace(
        client_config(judge, api_key),
        max_attempts=1,
        timeout=min(judge.timeout_seconds or TRY_TIMEOUT_SECONDS, TRY_TIMEOUT_SECONDS),
    )
    out: queue.Queue = queue.Queue()
    requests = _Requests(
        pairs=pairs, judge=judge, config=config, concurrency=max(1, len(pairs)), out=out
    )
    requests.start()
    results: dict[tuple[str, str], Trial] = {}
    version = prompt.template_version(template, judge.prompt_version)
    while (item := out.get()) is not _Requests.END:
        pair, digest, result = item
        outcome = _outcome(judge, pair, digest, version, result)
        shown = prompt.render(template, pair.values)
        key = (pair.values["qid"], pair.values["docno"])
        if isinstance(outcome, LLMGrade):
            results[key] = Trial(
                *key,
                judge.system_prompt,
                shown,
                outcome.raw_output,
                outcome.native_label,
                outcome.grade,
            )
        else:
            results[key] = Trial(
                *key, judge.system_prompt, shown, outcome.raw_answer, problem=outcome.reason
            )
    requests.join(timeout=5)
    keys = [(p.values["qid"], p.values["docno"]) for p in pairs]
    return [results[key] for key in keys if key in results]
