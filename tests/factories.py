"""Plain builders for test data (no factory library needed for a handful of models)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from django.contrib.auth import get_user_model

from judging import services
from judging.models import (
    Collection,
    Document,
    Judge,
    LLMProvider,
    Membership,
    PoolEntry,
    Query,
)

_seq = itertools.count(1)


def user(username: str | None = None, *, password: str = "pw", **extra):
    """Create a user with a known password."""
    name = username or f"user{next(_seq)}"
    return get_user_model().objects.create_user(username=name, password=password, **extra)


def collection(slug: str | None = None, **fields) -> Collection:
    """Create a collection."""
    slug = slug or f"c{next(_seq)}"
    return Collection.objects.create(name=fields.pop("name", slug.title()), slug=slug, **fields)


def query(coll: Collection, external_id: str | None = None, **fields) -> Query:
    """Create a query in ``coll``."""
    qid = external_id or f"q{next(_seq)}"
    fields.setdefault("text", f"query {qid}")
    return Query.objects.create(collection=coll, external_id=qid, **fields)


def document(coll: Collection, external_id: str | None = None, **fields) -> Document:
    """Create a document in ``coll``."""
    docno = external_id or f"d{next(_seq)}"
    fields.setdefault("title", f"Document {docno}")
    fields.setdefault("body", f"Body of {docno}.")
    return Document.objects.create(collection=coll, external_id=docno, **fields)


def member(coll: Collection, usr, role: str = Membership.Role.JUDGE) -> Membership:
    """Give ``usr`` a role in ``coll``."""
    return services.membership_grant(collection=coll, user=usr, role=role)


def judged_collection(
    slug: str, *, queries: Sequence[str], documents: Sequence[str], judges: Sequence[str]
) -> tuple[Collection, list]:
    """Create a collection with ``queries``, ``documents`` and users judging it; return both."""
    coll = collection(slug)
    for qid in queries:
        query(coll, qid)
    for docno in documents:
        document(coll, docno)
    users = [user(name) for name in judges]
    for usr in users:
        member(coll, usr, Membership.Role.JUDGE)
    return coll, users


def human_judge(usr) -> Judge:
    """Return the human judge of ``usr``."""
    return services.judge_for_user(user=usr)


def llm_judge(name: str = "gpt-test") -> Judge:
    """Create an LLM judge."""
    return Judge.objects.create(kind=Judge.Kind.LLM, name=name, provider="test", model=name)


def umbrela_judge(
    coll: Collection, base_url: str, *, api_key_env: str = "", name: str = "umbrela", **fields
) -> Judge:
    """Create an LLM judge on a new provider at ``base_url`` with the UMBRELA 0–3 scale.

    The judge is assigned to ``coll``; ``fields`` set the rest (``max_attempts`` ...).
    """
    fields.setdefault("timeout_seconds", 5)
    judge = Judge.objects.create(
        kind=Judge.Kind.LLM,
        name=name,
        model="fake-model",
        llm_provider=llm_provider(base_url, api_key_env=api_key_env),
        native_scale=["0", "1", "2", "3"],
        scale_mapping={"0": 0, "1": 1, "2": 3, "3": 4},
        **fields,
    )
    judge.collections.add(coll)
    return judge


def llm_provider(
    base_url: str,
    *,
    name: str | None = None,
    api_key_env: str = "",
    models: tuple[str, ...] = ("*",),
    private: tuple[str, ...] = ("127.0.0.1",),
    open_to: Iterable[Collection] | None = None,
    **fields,
) -> LLMProvider:
    """Register a provider as an operator would; tests' fake servers run on 127.0.0.1.

    ``open_to``: the collections whose coordinators may use it (default: every collection
    that exists now; ``()``: superusers only). ``fields``: budgets and prices.
    """
    provider = LLMProvider.objects.create(
        name=name or f"provider-{next(_seq)}",
        base_url=base_url.rstrip("/"),
        api_key_env=api_key_env,
        allowed_models=list(models),
        allowed_private_hosts=list(private),
        **fields,
    )
    provider.allowed_collections.set(Collection.objects.all() if open_to is None else open_to)
    return provider


def pool(coll: Collection, n_queries: int, n_docs: int) -> list[PoolEntry]:
    """Create ``n_queries`` queries × ``n_docs`` documents, all pooled (through the service)."""
    queries = [query(coll) for _ in range(n_queries)]
    docs = [document(coll) for _ in range(n_docs)]
    services.pool_add_ids(
        collection=coll,
        pairs=[(q.pk, d.pk) for q in queries for d in docs],
        source=PoolEntry.Source.MANUAL,
    )
    return list(
        PoolEntry.objects.filter(query__in=queries, document__in=docs).order_by(
            "query_id", "document_id"
        )
    )


def pool_entry(coll: Collection, q: Query, d: Document) -> PoolEntry:
    """Pool one pair through the service (which keeps the progress counters); return it."""
    services.pool_add_ids(collection=coll, pairs=[(q.pk, d.pk)], source=PoolEntry.Source.MANUAL)
    return PoolEntry.objects.get(query=q, document=d)
