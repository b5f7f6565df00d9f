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
import http
import logging
import os
import queue
import re
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import certifi
import httpx
import nh3
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Q

from judging import evidence
from judging.llm import egress, parse, prompt
from judging.llm import services as services_llm
from judging.llm.client import CallFailed, ClientConfig, Completion, complete
from judging.llm.models import LLMFailure, LLMJob, LLMJobChunk
from judging.llm.services import LeaseLost, LLMGrade, LLMPairFailure
from judging.models import Judge, Judgment, PoolEntry
from judging.quality.models import GoldPair
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
    chunk: int = 0  # the job chunk it belongs to (0: none)
    body: str = ""  # the document's body as stored (evidence quotes are found in its text)


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


def job_pair_ids(job: LLMJob) -> tuple[list[tuple[int, int]], int]:
    """Return the pairs (query id, document id) ``job`` should judge and how many it skips.

    Skipped are pairs the judge has already graded and id-only documents (no text to
    judge). Failed pairs of earlier jobs have no judgment, so they come back.

    The collection's gold pairs the judge has not graded are always included, also when
    the job is restricted to some queries or limited to some pairs, so every LLM judge
    has a gold record (accuracy, qualification). They are asked exactly as any other
    pair (the same prompt, in the same order by query and document id): the judge
    cannot tell them apart.
    """
    all_entries = PoolEntry.objects.filter(collection=job.collection)
    entries = all_entries
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
    order = ("query__external_id", "document__external_id")
    pending = entries.filter(graded=False, document__has_content=True).order_by(*order)
    limit = job.options.get("limit")
    if limit:
        pending = pending[:limit]
    skipped = entries.filter(Q(graded=True) | Q(document__has_content=False)).count()
    # Gold pairs still waiting to enter the pool are asked too (judging.services.gold_waiting).
    gold_pending = (
        GoldPair.objects.filter(collection_id=job.collection_id, document__has_content=True)
        .annotate(graded=Exists(graded))
        .filter(graded=False)
        .values_list(*order, "query_id", "document_id")
    )
    chosen = {
        (qid, docno): (q, d)
        for qid, docno, q, d in pending.values_list(*order, "query_id", "document_id")
    }
    chosen.update({(qid, docno): (q, d) for qid, docno, q, d in gold_pending})
    return [chosen[key] for key in sorted(chosen)], skipped


def chunk_pairs(job: LLMJob, chunk: LLMJobChunk) -> list[Pair]:
    """Return the chunk's pairs that have no outcome in ``job`` yet, ready for prompts.

    A chunk taken over from a worker that died has some of its pairs recorded already
    (graded by the judge, or failed in this job); they are not asked again.
    """
    wanted = [(int(q), int(d)) for q, d in chunk.pairs]
    queries = {q for q, _ in wanted}
    documents = {d for _, d in wanted}
    graded = set(
        Judgment.objects.filter(
            judge=job.judge,
            query_id__in=queries,
            document_id__in=documents,
            status=Judgment.Status.GRADED,
        ).values_list("query_id", "document_id")
    )
    failed = set(
        LLMFailure.objects.filter(
            job=job, query_id__in=queries, document_id__in=documents
        ).values_list("query_id", "document_id")
    )
    open_pairs = set(wanted) - graded - failed
    entries = PoolEntry.objects.filter(
        collection=job.collection, query_id__in=queries, document_id__in=documents
    )
    by_key = {(p.query_id, p.document_id): p for p in _pairs(entries)}
    return [
        dataclasses.replace(by_key[key], chunk=chunk.pk)
        for key in wanted
        if key in open_pairs and key in by_key
    ]


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
            body=body,
        )
        for q, d, qid, text, description, narrative, docno, title, body in rows
    ]


#: Completion tokens reserved for a request whose judge sets no ``max_tokens`` (the request
#: is then sent with this ``max_tokens`` when its provider has a budget).
DEFAULT_MAX_TOKENS = 1024
#: Tokens added to a prompt's bound for the chat format (per message, and per request).
MESSAGE_OVERHEAD_TOKENS = 16


def completion_bound(judge: Judge) -> int:
    """Return the most completion tokens one request of ``judge`` may use."""
    decoding = judge.decoding or {}
    for name in ("max_tokens", "max_completion_tokens"):
        value = decoding.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return DEFAULT_MAX_TOKENS


def has_budget(provider: Any) -> bool:
    """Return whether any budget limits ``provider``."""
    return any(
        getattr(provider, name) is not None
        for name in (
            "token_budget",
            "spend_budget",
            "collection_token_budget",
            "collection_spend_budget",
        )
    )


def request_bound(judge: Judge, system: str, user: str) -> services_llm.TokenCount:
    """Return the most tokens one request may use: the prompt's bound and ``max_tokens``.

    A prompt has at most as many tokens as its UTF-8 bytes (the byte-level tokenisers of
    OpenAI-compatible servers never make a token of less than one byte), plus the chat
    format's few tokens per message.
    """
    messages = 2 if system else 1
    size = len(system.encode()) + len(user.encode())
    prompt_bound = size + MESSAGE_OVERHEAD_TOKENS * (messages + 1)
    return services_llm.TokenCount(prompt_bound, completion_bound(judge))


def pair_bound(judge: Judge, pair: Pair) -> services_llm.TokenCount:
    """Return :func:`request_bound` of the request ``judge`` makes for ``pair``."""
    template = judge.prompt_template or prompt.DEFAULT_TEMPLATE
    return request_bound(judge, judge.system_prompt, prompt.render(template, pair.values))


def used_tokens(
    result: Completion | CallFailed, bound: services_llm.TokenCount
) -> services_llm.TokenCount:
    """Return what a request used: as reported; its bound if unreported; nothing if it failed.

    A call that failed (refused, timed out, an HTTP error) produced no completion, which
    the APIs do not bill.
    """
    if isinstance(result, CallFailed):
        return services_llm.TokenCount()
    if result.prompt_tokens is None or result.completion_tokens is None:
        return bound
    return services_llm.TokenCount(result.prompt_tokens, result.completion_tokens)


#: Fatal answers in a row (see :attr:`judging.llm.client.CallFailed.fatal`) after which a
#: worker stops its job, unless the settings name another number (0: never stop early).
FAIL_FAST_AFTER = 3


def fail_fast_after() -> int:
    """Return how many fatal answers in a row stop a job (``GRADED_LLM_FAIL_FAST_AFTER``)."""
    return max(0, int(getattr(settings, "GRADED_LLM_FAIL_FAST_AFTER", FAIL_FAST_AFTER)))


def _status_phrase(status: int) -> str:
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def fatal_cause(failed: CallFailed) -> str:
    """Return what a fatal answer says about the judge's set-up, and what to check."""
    status = failed.status
    if status is None:
        return f"Graded did not send the request ({failed.reason.rstrip('.')})"
    answered = f"the provider answered {_status_phrase(status)}"
    if status == 401:
        return f"{answered} — check the provider's API key (the operator sets it)"
    if status in (403, 407):
        return f"{answered} — the provider's key may not use this model; ask the operator"
    if status == 404:
        return f"{answered} — check the model name and the provider's base URL"
    if status in (400, 422):
        return f"{answered}: the model is unknown there — check the model name"
    if 300 <= status < 400:
        return f"{answered} (a redirect, not followed) — check the provider's base URL"
    return f"{answered} — check the provider's base URL"


def stop_reason(failed: CallFailed, count: int) -> str:
    """Return the error of a job stopped after ``count`` fatal answers in a row."""
    return f"Stopped after {count} requests in a row failed: {fatal_cause(failed)}."


def client_config(judge: Judge, api_key: str) -> ClientConfig:
    """Return the client settings of ``judge`` (backoff from the GRADED_LLM_* settings).

    Under a budget, a judge that sets no ``max_tokens`` sends :data:`DEFAULT_MAX_TOKENS`,
    so that no answer uses more than was reserved for it.
    """
    decoding = dict(judge.decoding or {})
    if has_budget(judge.llm_provider) and not (
        "max_tokens" in decoding or "max_completion_tokens" in decoding
    ):
        decoding["max_tokens"] = completion_bound(judge)
    return ClientConfig(
        endpoint=judge.llm_provider.base_url,
        model=judge.model,
        api_key=api_key or None,
        decoding=decoding,
        json_mode=judge.json_mode,
        timeout=judge.timeout_seconds,
        max_attempts=judge.max_attempts,
        backoff_base=float(getattr(settings, "GRADED_LLM_BACKOFF_BASE", 0.5)),
        backoff_cap=float(getattr(settings, "GRADED_LLM_BACKOFF_CAP", 30.0)),
    )


class _Requests(threading.Thread):
    """Send the requests of the pairs handed to :meth:`submit` from an asyncio loop.

    Outcomes go on the ``out`` queue as ``(pair, prompt hash, completion or failure)``;
    after :meth:`close`, once every submitted pair has its outcome, :attr:`END` follows.
    Pairs of a chunk named in :attr:`dropped` are not sent (their worker lost the chunk).

    After ``fail_fast`` fatal answers in a row (a wrong key, model or base URL, a refused
    destination; 0: never) the senders stop sending (:meth:`halt`, with the reason in
    :attr:`halt_reason`): the requests already out still answer, then :attr:`END` follows.
    The answers are counted on the event loop, before any sender takes its next pair, so
    at most ``fail_fast + concurrency - 1`` requests go out when every answer is fatal.
    """

    END = object()
    _CLOSE = object()

    def __init__(
        self,
        *,
        judge: Judge,
        config: ClientConfig,
        concurrency: int,
        out: queue.Queue,
        fail_fast: int = 0,
    ) -> None:
        super().__init__(name="llm-judge-requests", daemon=True)
        self.config, self.concurrency, self.out = config, concurrency, out
        self.fail_fast = fail_fast
        self.streak = 0  # fatal answers in a row (touched on the event loop only)
        self.halt_reason = ""
        self.template = judge.prompt_template or prompt.DEFAULT_TEMPLATE
        self.system = judge.system_prompt
        self.policy = judge.llm_provider.egress_policy()
        self.stop = threading.Event()
        self.dropped: set[int] = set()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._feed: asyncio.Queue | None = None
        self._waiting = 0  # pairs submitted and not yet taken by a sender
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        """Return how many submitted pairs no sender has taken yet."""
        return self._waiting

    def submit(self, pairs: list[Pair]) -> None:
        """Queue ``pairs`` for sending."""
        self._ready.wait()
        assert self._loop is not None and self._feed is not None
        with self._lock:
            self._waiting += len(pairs)
        for pair in pairs:
            self._loop.call_soon_threadsafe(self._feed.put_nowait, pair)

    def close(self) -> None:
        """Send what was submitted, then end (:attr:`END` goes on the queue last)."""
        self._ready.wait()
        self._wake_senders()

    def halt(self, reason: str = "") -> None:
        """Send nothing more; let the requests out answer, then end (``reason``: why)."""
        if reason and not self.halt_reason:
            self.halt_reason = reason
        self.stop.set()
        self._ready.wait()
        self._wake_senders()

    def _wake_senders(self) -> None:
        """Put one end mark per sender on the feed, from any thread (none once it ended)."""
        loop, feed = self._loop, self._feed
        if loop is None or feed is None or not self.is_alive():
            return
        marks = [self._CLOSE] * self.concurrency
        try:
            if threading.current_thread() is self:
                for mark in marks:
                    feed.put_nowait(mark)
            else:
                for mark in marks:
                    loop.call_soon_threadsafe(feed.put_nowait, mark)
        except RuntimeError:  # the loop closed meanwhile: the senders have ended
            pass

    def _note(self, result: Completion | CallFailed) -> None:
        """Count fatal answers in a row; halt after :attr:`fail_fast` of them."""
        if not self.fail_fast:
            return
        if isinstance(result, CallFailed) and not result.attempts:
            return  # never sent (the prompt was too long): says nothing of the provider
        if isinstance(result, CallFailed) and result.fatal:
            self.streak += 1
            if self.streak >= self.fail_fast and not self.stop.is_set():
                self.halt(stop_reason(result, self.streak))
        else:
            self.streak = 0

    def run(self) -> None:
        """Run the loop to completion, then signal the end."""
        try:
            asyncio.run(self._main())
        finally:
            self._ready.set()  # never leave submit() waiting on a loop that failed to start
            self.out.put(self.END)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._feed = asyncio.Queue()
        self._ready.set()
        # One client with one keep-alive connection per sender: httpcore's pool scans all
        # its connections on every request, so N small pools cost less CPU than one of N.
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        tls = ssl.create_default_context(cafile=certifi.where())  # loaded once, shared
        feed = self._feed

        async def sender() -> None:
            async with egress.guarded_client(self.policy, verify=tls, limits=limits) as client:
                while (pair := await feed.get()) is not self._CLOSE:
                    with self._lock:
                        self._waiting -= 1
                    if self.stop.is_set():
                        return
                    if pair.chunk and pair.chunk in self.dropped:
                        continue
                    answer = await self._one(client, pair)
                    self.out.put(answer)
                    self._note(answer[2])

        await asyncio.gather(*(sender() for _ in range(self.concurrency)))

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


def _quoted_spans(content: str, body: str) -> tuple[evidence.Span, ...]:
    """Return the quotes of a JSON answer found in the document, as evidence spans.

    Quotes the document does not hold (a model may paraphrase), blank ones and ones
    longer than a span may be are left out; the rest are merged, in document order.
    """
    found = parse.quotes(content, most=evidence.MAX_SPANS)
    if not found:
        return ()
    text = evidence.document_text(body)
    spans = []
    for quote in found:
        where = parse.find_quote(quote, text)
        if where is not None and 0 < where[1] - where[0] <= evidence.MAX_SPAN_LENGTH:
            spans.append(evidence.Span(where[0], where[1], text[where[0] : where[1]]))
    try:
        return evidence.checked_spans(spans, text)
    except ValidationError:  # too much quoted in all: keep no spans rather than fail
        return ()


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
        note=parse.explanation(result.content, pattern=judge.answer_pattern),
        evidence=_quoted_spans(result.content, pair.body),
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


def _fail_job(job: LLMJob, exc: Exception) -> None:
    message = "; ".join(getattr(exc, "messages", None) or [str(exc)])
    services_llm.llm_job_set_status(job=job, status=LLMJob.Status.FAILED, error=message)


def _check(job: LLMJob) -> str | None:
    """Return the judge's API key if ``job`` can run, else fail the job and return None."""
    judge = job.judge
    try:
        services_llm.check_runnable(judge)
        services_llm.check_open_to(judge=judge, collection=job.collection, user=job.created_by)
        api_key = services_llm.api_key_for(judge)
        prompt.check_template(judge.prompt_template or prompt.DEFAULT_TEMPLATE)
        parse.compile_pattern(judge.answer_pattern)
    except (ValidationError, ValueError) as exc:
        _fail_job(job, exc)
        return None
    return api_key


def plan(job: LLMJob, *, chunk_pairs: int | None = None) -> bool:
    """Start a queued job: check that its judge can run, choose its pairs, split them.

    A judge that cannot run (no provider, a model the provider does not allow, its key
    variable unset) fails the job before any request, with the reason in ``job.error``.
    Returns whether this call started the job (False: it had already been started, or
    failed now).
    """
    if _check(job) is None:
        return False
    pairs, skipped = job_pair_ids(job)
    size = chunk_pairs or int(
        getattr(settings, "GRADED_LLM_CHUNK_PAIRS", services_llm.DEFAULT_CHUNK_PAIRS)
    )
    started = services_llm.llm_job_plan(job=job, pairs=pairs, skipped=skipped, chunk_pairs=size)
    job.refresh_from_db()
    return started


def worker_name() -> str:
    """Return a name for this worker's leases: host, process id and a random token."""
    return f"{socket.gethostname()[:100]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


@dataclass
class _Held:
    """A chunk this worker holds: pairs still out, outcomes not yet recorded."""

    out: int
    grades: list[LLMGrade] = dataclasses.field(default_factory=list)
    failures: list[LLMPairFailure] = dataclasses.field(default_factory=list)


def work(
    job: LLMJob,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    batch_size: int = 100,
    flush_seconds: float = 1.0,
    lease_seconds: float | None = None,
    owner: str | None = None,
) -> LLMJob:
    """Judge chunks of a started job until none is left, then end the job; return it.

    Any number of workers may run this on the same job at once: each takes a chunk at a
    time (a new one as soon as its senders run short), records its outcomes in batches of
    at most ``batch_size`` or every ``flush_seconds`` (each batch atomically, and only
    while it still holds the chunk's lease), and renews its leases while requests are
    out. When no chunk is free it waits for the others, taking over any chunk whose lease
    runs out; the last one to see every chunk done ends the job.

    A worker whose requests get :func:`fail_fast_after` fatal answers in a row stops the
    job (Failed, with :func:`stop_reason`); every worker looks at the job's status each
    ``flush_seconds`` and, once it has ended, sends nothing more. Either way a stopping
    worker records the answers of the requests already out, gives back its chunks (their
    pairs not asked have no outcome: a later job asks them) and the reservations of the
    requests it never sent.
    """
    job.refresh_from_db()
    if job.status != LLMJob.Status.RUNNING:
        return job
    api_key = _check(job)
    if api_key is None:
        return job
    judge = job.judge
    lease = float(lease_seconds or getattr(settings, "GRADED_LLM_LEASE_SECONDS", 60.0))
    owner = owner or worker_name()
    template = judge.prompt_template or prompt.DEFAULT_TEMPLATE
    version = prompt.template_version(template, judge.prompt_version)
    concurrency = max(1, int(job.options.get("concurrency") or 4))
    progress = Progress(total=job.total, skipped=job.skipped, started=time.monotonic())
    progress.done, progress.failed = job.done, job.failed
    out: queue.Queue = queue.Queue()
    requests = _Requests(
        judge=judge,
        config=client_config(judge, api_key),
        concurrency=concurrency,
        out=out,
        fail_fast=fail_fast_after(),
    )
    held: dict[int, _Held] = {}
    last_flush = last_renew = time.monotonic()
    waiting_until = 0.0  # no free chunk: do not ask again before this
    budget = _Budget(job)

    def record(chunk_id: int, state: _Held, *, done: bool) -> None:
        try:
            services_llm.llm_batch_record(
                job=job,
                grades=state.grades,
                failures=state.failures,
                chunk_id=chunk_id,
                owner=owner,
                lease_seconds=lease,
                chunk_done=done,
            )
        except LeaseLost:
            logger.warning("LLM job %s: chunk %s was taken over; dropping it", job.pk, chunk_id)
            requests.dropped.add(chunk_id)
            budget.drop(chunk_id)
            held.pop(chunk_id, None)
        state.grades.clear()
        state.failures.clear()

    def flush() -> None:
        nonlocal last_flush
        budget.settle()
        for chunk_id, state in list(held.items()):
            if state.grades or state.failures:
                record(chunk_id, state, done=False)
        last_flush = time.monotonic()

    def send(pairs: list[Pair]) -> None:
        """Submit the pairs the budgets have room for; keep the others for later."""
        granted = budget.reserve(pairs)
        if granted:
            requests.submit(granted)

    def stop_for_budget() -> None:
        """End the job (budget reached) and give back the chunks still held."""
        flush()
        services_llm.llm_job_set_status(job=job, status=LLMJob.Status.FAILED, error=budget.why)
        services_llm.llm_chunks_release(chunk_ids=list(held), owner=owner)
        held.clear()
        budget.deferred.clear()

    def stop_now(reason: str) -> None:
        """Record the answers in, stop the job (with ``reason``) and give back the chunks."""
        flush()
        if reason and services_llm.llm_job_stop(job=job, error=reason):
            logger.warning("LLM job %s: %s", job.pk, reason)
        services_llm.llm_chunks_release(chunk_ids=list(held), owner=owner)
        held.clear()
        budget.deferred.clear()

    def renew() -> None:
        nonlocal last_renew
        kept = services_llm.llm_chunks_renew(chunk_ids=list(held), owner=owner, lease_seconds=lease)
        for chunk_id in set(held) - kept:
            logger.warning("LLM job %s: lost the lease of chunk %s", job.pk, chunk_id)
            requests.dropped.add(chunk_id)
            budget.drop(chunk_id)
            del held[chunk_id]
        last_renew = time.monotonic()

    def take() -> bool:
        """Claim chunks until the senders have enough to do; return whether one was taken."""
        nonlocal waiting_until
        took = False
        # twice the senders queued: they keep busy while this thread waits on the database
        while (
            requests.waiting < 2 * concurrency
            and time.monotonic() >= waiting_until
            and not budget.deferred  # no room in the budget: claim no more
            and not requests.stop.is_set()  # stopping: claim no more
        ):
            chunk = services_llm.llm_chunk_claim(job=job, owner=owner, lease_seconds=lease)
            if chunk is None:  # none free now: ask again in a while, not after every answer
                waiting_until = time.monotonic() + min(1.0, lease / 4)
                return took
            took = True
            pairs = chunk_pairs(job, chunk)
            if not pairs:  # every pair recorded before its worker died
                held[chunk.pk] = _Held(out=0)
                record(chunk.pk, held[chunk.pk], done=True)
                held.pop(chunk.pk, None)
                continue
            held[chunk.pk] = _Held(out=len(pairs))
            send(pairs)
        return took

    if on_progress:
        on_progress(progress)
    requests.start()
    try:
        while True:
            if not take() and not held:
                if requests.halt_reason:  # its last fatal answer ended this worker's chunks
                    stop_now(requests.halt_reason)
                    break
                # Idle until the job ends: give back now what the last answers did not use
                # (the loop below, which settles, is not reached again), else that room
                # stays reserved and the others' waiting pairs find none.
                budget.settle()
                if services_llm.llm_job_finish_if_complete(job=job):
                    break
                # Others hold the remaining chunks: wait, and take over any that they drop.
                time.sleep(max(0.0, waiting_until - time.monotonic()))
                continue
            try:
                item = out.get(timeout=min(flush_seconds, lease / 4))
            except queue.Empty:
                item = None
            now = time.monotonic()
            if item is _Requests.END:  # the senders stopped and every answer is in
                if not requests.stop.is_set():
                    raise RuntimeError("the request thread ended early")
                stop_now(requests.halt_reason)
                break
            if item is not None:
                pair, digest, result = item
                budget.answered(pair, result)
                state = held.get(pair.chunk)
                if state is not None:
                    outcome = _outcome(judge, pair, digest, version, result)
                    _count(progress, outcome, judge, pair)
                    if isinstance(outcome, LLMGrade):
                        state.grades.append(outcome)
                    else:
                        state.failures.append(outcome)
                    state.out -= 1
                    if state.out == 0:  # held until recorded: a shutdown now releases it
                        record(pair.chunk, state, done=True)
                        held.pop(pair.chunk, None)
                    elif len(state.grades) + len(state.failures) >= batch_size:
                        record(pair.chunk, state, done=False)
                    if on_progress:
                        on_progress(progress)
            if budget.deferred and not requests.stop.is_set():  # waiting for room: try again
                budget.settle()
                send(budget.take_deferred())
                if budget.hopeless(requests.dropped, patience=lease):
                    stop_for_budget()
                    continue
            if now - last_flush >= flush_seconds:
                flush()
                if not requests.stop.is_set() and not services_llm.llm_job_running(job=job):
                    requests.halt()  # another worker stopped the job (or it ended)
            if held and now - last_renew >= lease / 4:
                renew()
    except Exception as exc:  # a fault of this job: it stops for every worker
        requests.stop.set()
        services_llm.llm_job_set_status(
            job=job, status=LLMJob.Status.FAILED, error=f"Stopped: {exc.__class__.__name__}."
        )
        raise
    except BaseException:  # this worker is shutting down: the others take its chunks now
        requests.stop.set()
        services_llm.llm_chunks_release(chunk_ids=list(held), owner=owner)
        raise
    finally:
        requests.close()
        requests.join(timeout=60)
        if not requests.is_alive():  # what was reserved and never sent goes back
            budget.release_unanswered()
    job.refresh_from_db()
    if on_progress:
        progress.done, progress.failed = job.done, job.failed
        on_progress(progress)
    return job


class _Budget:
    """One worker's reservations under its job's provider budgets.

    Every request is reserved (:func:`pair_bound`) before it goes to the senders, in the
    database, so that all workers of all jobs together stay within the provider's token
    and spend budgets and those of each collection. Answers replace reservations by what
    they used (:meth:`settle`). Pairs with no room wait in :attr:`deferred` while
    requests of any worker are out (their answers give back room); the job ends when no
    room is left once they have all answered (:meth:`hopeless`).
    """

    def __init__(self, job: LLMJob) -> None:
        self.judge = job.judge
        self.provider_id = job.judge.llm_provider_id
        self.collection_id = job.collection_id
        self.reserved: dict[tuple[int, int], tuple[int, services_llm.TokenCount]] = {}
        self.deferred: list[Pair] = []
        self.why = ""
        self.final = False
        self.waiting = False
        self.waiting_since = 0.0
        self._settle_reserved = services_llm.TokenCount()
        self._settle_used = services_llm.TokenCount()

    def in_flight(self, dropped: set[int]) -> int:
        """Return how many reserved requests of chunks not ``dropped`` have no answer yet."""
        return sum(1 for chunk, _ in self.reserved.values() if chunk not in dropped)

    def drop(self, chunk_id: int) -> None:
        """Forget the waiting pairs of a chunk this worker lost."""
        self.deferred = [pair for pair in self.deferred if pair.chunk != chunk_id]
        self.waiting = bool(self.deferred)

    def reserve(self, pairs: list[Pair]) -> list[Pair]:
        """Reserve room for ``pairs`` in order; return those that fit (the rest wait)."""
        if not pairs:
            return []
        bounds = [pair_bound(self.judge, pair) for pair in pairs]
        reservation = services_llm.llm_budget_reserve(
            provider_id=self.provider_id, collection_id=self.collection_id, counts=bounds
        )
        granted = reservation.granted
        for pair, bound in zip(pairs[:granted], bounds[:granted], strict=True):
            self.reserved[(pair.query_id, pair.document_id)] = (pair.chunk, bound)
        if granted < len(pairs):
            if granted or not self.waiting:  # waiting from now (any progress restarts it)
                self.waiting_since = time.monotonic()
            self.waiting = True
            self.deferred.extend(pairs[granted:])
            self.why, self.final = reservation.why, reservation.final
        else:
            self.waiting = False
        return pairs[:granted]

    def hopeless(self, dropped: set[int], patience: float) -> bool:
        """Return whether the waiting pairs will never fit: end the job.

        When no room is left even once every request in flight (of any worker) has
        answered, or this worker has nothing in flight and others' reservations have not
        made room for ``patience`` seconds (a worker that died holding some).
        """
        if not self.deferred:
            return False
        if self.final:
            return not self.in_flight(dropped)
        waited = time.monotonic() - self.waiting_since
        return not self.in_flight(dropped) and waited >= patience

    def take_deferred(self) -> list[Pair]:
        """Return the waiting pairs (to reserve again)."""
        pairs, self.deferred = self.deferred, []
        return pairs

    def answered(self, pair: Pair, result: Completion | CallFailed) -> None:
        """Note what the request of ``pair`` used, to settle."""
        entry = self.reserved.pop((pair.query_id, pair.document_id), None)
        if entry is not None:
            self._settle_reserved += entry[1]
            self._settle_used += used_tokens(result, entry[1])

    def settle(self) -> None:
        """Replace the answered requests' reservations by what they used."""
        if self._settle_reserved == self._settle_used == services_llm.TokenCount():
            return
        services_llm.llm_budget_settle(
            provider_id=self.provider_id,
            collection_id=self.collection_id,
            reserved=self._settle_reserved,
            used=self._settle_used,
        )
        self._settle_reserved = self._settle_used = services_llm.TokenCount()

    def release_unanswered(self) -> None:
        """Settle, and give back the reservations of requests never sent."""
        for _chunk, bound in self.reserved.values():
            self._settle_reserved += bound
        self.reserved.clear()
        try:
            self.settle()
        except Exception:  # the database is gone: the room stays reserved (never over)
            logger.exception("LLM budget: could not give back reservations")


def _count(
    progress: Progress, outcome: LLMGrade | LLMPairFailure, judge: Judge, pair: Pair
) -> None:
    """Add one outcome to ``progress`` (and log a failure)."""
    if isinstance(outcome, LLMGrade):
        progress.done += 1
        progress.tokens += (outcome.prompt_tokens or 0) + (outcome.completion_tokens or 0)
        return
    progress.failed += 1
    logger.info(
        "LLM judge %s failed on pair %s/%s: %s",
        judge.pk,
        pair.values["qid"],
        pair.values["docno"],
        outcome.reason,
    )


def run_job(
    job: LLMJob,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    batch_size: int = 100,
    flush_seconds: float = 1.0,
) -> LLMJob:
    """Start ``job`` and judge all of it in this process; return it refreshed.

    The command line and inline runs use this; Celery workers run :func:`plan` once and
    :func:`work` in as many workers as the job may use (see :mod:`judging.llm.tasks`).
    """
    plan(job)
    return work(job, on_progress=on_progress, batch_size=batch_size, flush_seconds=flush_seconds)


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
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    call_failed: bool = False  # no answer at all (refused, HTTP error, timeout), not unreadable


@dataclass(frozen=True)
class Asked:
    """What :func:`ask_judge` got: a trial per pair answered, and why it stopped early if so."""

    trials: list[Trial]
    halt_reason: str = ""


def trial_pairs(*, collection: Any, count: int = TRY_PAIRS) -> list[Pair]:
    """Return the first ``count`` pooled pairs with text (by query, then document id)."""
    entries = PoolEntry.objects.filter(collection=collection, document__has_content=True)
    return _pairs(entries.order_by("query__external_id", "document__external_id")[:count])


def try_judge(
    judge: Judge, pairs: list[Pair], *, collection: Any = None, user: Any = None
) -> list[Trial]:
    """Ask ``judge`` about ``pairs`` once each and return what happened; record nothing.

    The same request path as a job (the provider's egress policy, key and decoding), with
    one attempt per pair and the pairs asked at once, so the page waits at most
    :data:`TRY_TIMEOUT_SECONDS`. With ``collection``, the provider must be open to it for
    ``user`` and the tries count against its budgets (all of them fit, or none is sent).
    Raises ``ValidationError`` when the judge cannot run at all. A try is never cut short.
    """
    return ask_judge(judge, pairs, collection=collection, user=user).trials


def ask_judge(
    judge: Judge,
    pairs: list[Pair],
    *,
    collection: Any = None,
    user: Any = None,
    concurrency: int | None = None,
    fail_fast: int = 0,
) -> Asked:
    """Ask as :func:`try_judge` does, with ``concurrency`` senders (default: all pairs at once).

    With ``fail_fast`` (see :func:`fail_fast_after`), the senders stop after that many
    fatal answers in a row, as a job's do: the requests already out still answer, the
    pairs not sent get no trial, and :attr:`Asked.halt_reason` says why
    (:func:`stop_reason`). The background checks of LLM judges
    (:mod:`judging.quality.checks`) ask this way.
    """
    services_llm.check_runnable(judge)
    budget: _Budget | None = None
    if collection is not None:
        services_llm.check_open_to(judge=judge, collection=collection, user=user)
        budget = _Budget(LLMJob(judge=judge, collection=collection))
        if len(budget.reserve(pairs)) < len(pairs):
            budget.release_unanswered()
            raise ValidationError({"llm_provider": budget.why})
    try:
        return _try_pairs(judge, pairs, budget, concurrency=concurrency, fail_fast=fail_fast)
    finally:
        if budget is not None:
            budget.release_unanswered()


def _try_pairs(
    judge: Judge,
    pairs: list[Pair],
    budget: _Budget | None,
    *,
    concurrency: int | None = None,
    fail_fast: int = 0,
) -> Asked:
    """Send the tries of :func:`ask_judge` and read the answers."""
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
        judge=judge,
        config=config,
        concurrency=max(1, min(concurrency or len(pairs), len(pairs))),
        out=out,
        fail_fast=fail_fast,
    )
    requests.start()
    requests.submit(pairs)
    requests.close()
    results: dict[tuple[str, str], Trial] = {}
    version = prompt.template_version(template, judge.prompt_version)
    while (item := out.get()) is not _Requests.END:
        pair, digest, result = item
        if budget is not None:
            budget.answered(pair, result)
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
                prompt_tokens=outcome.prompt_tokens,
                completion_tokens=outcome.completion_tokens,
                latency_ms=outcome.latency_ms,
            )
        else:
            results[key] = Trial(
                *key,
                judge.system_prompt,
                shown,
                outcome.raw_answer,
                problem=outcome.reason,
                call_failed=isinstance(result, CallFailed),
            )
    requests.join(timeout=5)
    keys = [(p.values["qid"], p.values["docno"]) for p in pairs]
    return Asked([results[key] for key in keys if key in results], requests.halt_reason)
