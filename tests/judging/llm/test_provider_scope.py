"""Issue 32 item 9: who may use an LLM provider, and the budgets the runner keeps.

Providers are the operator's: each is open to a list of collections and of groups (both
empty: superusers only), lists and choices show a user only the providers open to them,
and every request is reserved against the provider's token and spend budgets (and those
of each collection) before it is sent, against the local fake server.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from judging.llm import runner
from judging.llm import services as services_llm
from judging.llm.models import LLMJob, LLMProvider, LLMUsage
from judging.models import Judgment, Membership
from tests import factories
from tests.api_client import client_for
from tests.judging.llm.conftest import KEY_ENV
from tests.judging.llm.fake_server import Reply

pytestmark = pytest.mark.django_db

Role = Membership.Role
#: What the fake server reports per request (prompt 100, completion 7).
USED = 107


def _names(user) -> list[str]:
    response = client_for(user).get("/api/v1/llm-providers/")
    assert response.status_code == 200
    return [p["name"] for p in response.json()]


def test_providers_are_listed_only_to_coordinators_they_are_open_to(coll):
    other = factories.collection("other")
    cora, otto, judy, nobody = (factories.user(n) for n in ("cora", "otto", "judy", "nobody"))
    grace = factories.user("grace")
    root = factories.user("root", is_superuser=True, is_staff=True)
    factories.member(coll, cora, Role.COORDINATOR)
    factories.member(other, otto, Role.COORDINATOR)
    factories.member(other, grace, Role.COORDINATOR)
    factories.member(coll, judy, Role.JUDGE)
    team = Group.objects.create(name="llm-users")
    grace.groups.add(team)
    judy.groups.add(team)  # in the group, but coordinates nothing
    factories.llm_provider("http://127.0.0.1:9/v1", name="for-demo", open_to=[coll])
    by_group = factories.llm_provider("http://127.0.0.1:9/v1", name="for-group", open_to=())
    by_group.allowed_groups.add(team)
    factories.llm_provider("http://127.0.0.1:9/v1", name="operator-only", open_to=())
    assert _names(cora) == ["for-demo"]
    assert _names(otto) == []
    assert _names(grace) == ["for-group"]
    assert _names(judy) == [] and _names(nobody) == []
    assert _names(root) == ["for-demo", "for-group", "operator-only"]


def test_judges_may_be_set_only_to_a_provider_open_to_the_user(coll):
    cora = factories.user("cora")
    factories.member(coll, cora, Role.COORDINATOR)
    factories.llm_provider("http://127.0.0.1:9/v1", name="closed", open_to=())
    factories.llm_provider("http://127.0.0.1:9/v1", name="open", open_to=[coll])
    body = {"name": "j", "model": "m", "collections": [coll.slug]}
    refused = client_for(cora).post("/api/v1/judges/", {**body, "llm_provider": "closed"})
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "llm_provider"
    made = client_for(cora).post("/api/v1/judges/", {**body, "llm_provider": "open"})
    assert made.status_code == 201, made.content
    # The configuration page offers the open provider only.
    page = Client()
    page.force_login(cora)
    html = page.get(f"/c/{coll.slug}/llm-judges/new/").content.decode()
    assert ">open<" in html and "closed" not in html


def test_a_job_on_a_provider_not_open_to_the_collection_is_refused_and_sends_nothing(
    coll, pooled, llm, fake, provider
):
    cora = factories.user("cora")
    factories.member(coll, cora, Role.COORDINATOR)
    provider.allowed_collections.clear()
    response = client_for(cora).post(
        f"/api/v1/collections/{coll.slug}/llm-jobs/", {"judge": llm.pk}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "llm_provider"
    # A job created while it was open fails at its start once the operator closes it.
    provider.allowed_collections.add(coll)
    job = services_llm.llm_job_create(collection=coll, judge=llm, actor=cora)
    provider.allowed_collections.clear()
    job = runner.run_job(job)
    assert job.status == "failed" and "not open to this collection" in job.error
    assert fake.requests == []


def _bound(llm, coll) -> int:
    """Return the largest reservation of one request of ``llm`` over ``coll``'s pool."""
    pairs = runner._pairs(coll.pool_entries.all())
    return max(runner.pair_bound(llm, pair).total for pair in pairs)


def _set(provider: LLMProvider, **fields) -> None:
    """Change the operator's settings of ``provider`` (never its usage counters)."""
    LLMProvider.objects.filter(pk=provider.pk).update(**fields)
    provider.refresh_from_db()


def _cost(llm, coll, provider) -> Decimal:
    """Return the largest reservation of one request in money, at the provider's prices."""
    pairs = runner._pairs(coll.pool_entries.all())
    return max(
        services_llm.spend_nanos(provider, runner.pair_bound(llm, pair)) for pair in pairs
    ) / Decimal(10**9)


def _budget_job(coll, llm, **options) -> LLMJob:
    return runner.run_job(services_llm.llm_job_create(collection=coll, judge=llm, **options))


@pytest.mark.parametrize("concurrency", [1, 8])
def test_the_token_budget_stops_the_job_before_a_request_would_pass_it(
    coll, pooled, llm, fake, provider, concurrency
):
    fake.script = lambda body, n: Reply(delay=0.02)
    bound = _bound(llm, coll)
    _set(provider, token_budget=bound + 3 * USED)  # room for a few answers of 107 tokens
    job = _budget_job(coll, llm, concurrency=concurrency)
    sent = len(fake.requests)
    assert job.status == "failed" and job.error.startswith("Budget reached")
    assert "token budget" in job.error
    assert 0 < sent < 12
    provider.refresh_from_db()
    # Reservations were settled to the reported usage, and nothing was left reserved.
    assert provider.tokens_used == sent * USED <= provider.token_budget
    assert provider.tokens_reserved == 0
    usage = LLMUsage.objects.get(provider=provider, collection=coll)
    assert (usage.tokens_used, usage.tokens_reserved) == (sent * USED, 0)
    # It stopped only when the next request's bound no longer fitted.
    assert provider.token_budget - provider.tokens_used < bound
    assert Judgment.objects.filter(judge=llm).count() == job.done == sent
    # Raising the budget lets a new job judge the pairs left, and only those.
    _set(provider, token_budget=None)
    again = _budget_job(coll, llm, concurrency=concurrency)
    assert again.status == "done" and again.done == 12 - sent
    assert len(fake.requests) == 12


def test_the_spend_budget_counts_input_and_output_at_their_prices(
    coll, pooled, llm, fake, provider
):
    _set(provider, price_input_per_1k=Decimal("0.5"), price_output_per_1k=Decimal("1.5"))
    per_request = Decimal(100) * Decimal("0.0005") + Decimal(7) * Decimal("0.0015")  # 0.0605
    _set(provider, spend_budget=_cost(llm, coll, provider) + 3 * per_request)
    job = _budget_job(coll, llm, concurrency=2)
    sent = len(fake.requests)
    assert job.status == "failed" and "spend budget" in job.error
    provider.refresh_from_db()
    spent = Decimal(provider.spend_used_nanos) / 10**9
    assert spent == sent * per_request <= provider.spend_budget
    assert 3 <= sent < 12


def test_a_collection_budget_stops_one_collection_and_not_the_other(fake, api_key):
    """Two collections share a provider with a budget per collection, and one in total."""
    colls = [factories.collection(slug) for slug in ("a", "b")]
    provider = factories.llm_provider(fake.url, name="shared", api_key_env=KEY_ENV, open_to=colls)
    judges = []
    for coll in colls:
        factories.pool(coll, 2, 3)
        judge = factories.llm_judge(f"llm-{coll.slug}")
        judge.llm_provider = provider
        judge.decoding = {"max_tokens": 50}
        judge.save()
        judge.collections.add(coll)
        judges.append(judge)
    bound = _bound(judges[0], colls[0])
    _set(provider, collection_token_budget=bound + 2 * USED)
    first = _budget_job(colls[0], judges[0])
    assert first.status == "failed" and "per collection" in first.error
    used_a = LLMUsage.objects.get(collection=colls[0]).tokens_used
    assert used_a == first.done * USED <= provider.collection_token_budget
    # b has its own allowance, so it is not held back by what a used.
    # the provider's total leaves room for b's six requests
    _set(provider, collection_token_budget=10 * bound, token_budget=used_a + 6 * USED + bound)
    second = _budget_job(colls[1], judges[1])
    assert second.status == "done" and second.done == 6
    provider.refresh_from_db()
    assert provider.tokens_used == used_a + 6 * USED


def test_a_spent_budget_sends_nothing_and_a_judge_without_max_tokens_is_capped(
    coll, pooled, llm, fake, provider
):
    _set(provider, token_budget=10_000, tokens_used=10_000)
    job = _budget_job(coll, llm)
    assert job.status == "failed" and job.error.startswith("Budget reached")
    assert fake.requests == []
    # Under a budget, a request always carries the max_tokens its reservation counted on.
    _set(provider, tokens_used=0)
    llm.decoding = {"temperature": 0}
    llm.save()
    _budget_job(coll, llm, limit=1)
    assert fake.requests[0]["body"]["max_tokens"] == runner.DEFAULT_MAX_TOKENS


def test_room_held_by_a_worker_that_died_stops_the_job_after_a_lease(
    coll, pooled, llm, fake, provider
):
    """Reservations nobody will settle: the worker waits one lease for them, then stops."""
    bound = _bound(llm, coll)
    _set(provider, token_budget=2 * bound, tokens_reserved=2 * bound)  # a dead worker's
    job = services_llm.llm_job_create(collection=coll, judge=llm)
    assert runner.plan(job)
    job = runner.work(job, lease_seconds=1.0, flush_seconds=0.1)
    assert job.status == "failed" and job.error.startswith("Budget reached")
    assert fake.requests == []
    provider.refresh_from_db()
    assert (provider.tokens_reserved, provider.tokens_used) == (2 * bound, 0)


def test_a_worker_left_waiting_for_others_chunks_holds_no_reservation(
    coll, pooled, llm, fake, provider, monkeypatch
):
    """A worker whose chunks are done gives back what its answers did not use at once.

    It waits for the chunks others hold, possibly until the job ends, so the room its
    last answers reserved must not wait for its next flush (others' pairs need it).
    """
    _set(provider, token_budget=100 * _bound(llm, coll))
    job = services_llm.llm_job_create(collection=coll, judge=llm)
    assert runner.plan(job, chunk_pairs=6)
    other = services_llm.llm_chunk_claim(job=job, owner="other", lease_seconds=60)
    assert other is not None
    reserved_when_idle = []
    finish = services_llm.llm_job_finish_if_complete

    def idle(*, job: LLMJob) -> bool:
        provider.refresh_from_db()
        reserved_when_idle.append(provider.tokens_reserved)
        services_llm.llm_chunks_release(chunk_ids=[other.pk], owner="other")  # taken over
        return finish(job=job)

    monkeypatch.setattr(services_llm, "llm_job_finish_if_complete", idle)
    job = runner.work(job, flush_seconds=60, lease_seconds=60)  # no flush meanwhile
    assert job.status == "done" and job.done == 12
    assert reserved_when_idle and set(reserved_when_idle) == {0}
    provider.refresh_from_db()
    assert (provider.tokens_reserved, provider.tokens_used) == (0, 12 * USED)


def test_trying_a_judge_counts_against_the_budget(coll, pooled, llm, fake, provider):
    cora = factories.user("cora")
    factories.member(coll, cora, Role.COORDINATOR)
    client = Client()
    client.force_login(cora)
    url = f"/c/{coll.slug}/llm-judges/{llm.pk}/try/"
    _set(provider, token_budget=_bound(llm, coll))  # room for one try, not three
    page = client.post(url)
    assert "Budget reached" in page.content.decode()
    assert fake.requests == []
    _set(provider, token_budget=None)
    client.post(url)
    provider.refresh_from_db()
    assert len(fake.requests) == runner.TRY_PAIRS
    assert provider.tokens_used == runner.TRY_PAIRS * USED


def test_the_ledger_reserves_within_the_budget_and_settles_what_was_used(coll, provider):
    _set(provider, token_budget=1000)
    count = services_llm.TokenCount(300, 100)

    def reserve(n: int) -> services_llm.Reservation:
        return services_llm.llm_budget_reserve(
            provider_id=provider.pk, collection_id=coll.pk, counts=[count] * n
        )

    first = reserve(5)
    assert first.granted == 2 and first.why.startswith("Budget reached")
    assert not first.final  # 800 reserved: once answered, there may be room again
    provider.refresh_from_db()
    assert (provider.tokens_reserved, provider.tokens_used) == (800, 0)
    services_llm.llm_budget_settle(
        provider_id=provider.pk,
        collection_id=coll.pk,
        reserved=count + count,
        used=services_llm.TokenCount(100, 7) + services_llm.TokenCount(100, 7),
    )
    provider.refresh_from_db()
    assert (provider.tokens_reserved, provider.tokens_used) == (0, 2 * USED)
    second = reserve(5)
    assert second.granted == 1 and not second.final  # 214 used + 400 reserved + 400 > 1000
    too_big = services_llm.llm_budget_reserve(
        provider_id=provider.pk,
        collection_id=coll.pk,
        counts=[services_llm.TokenCount(700, 100)],
    )
    assert too_big.granted == 0 and too_big.final  # 214 used + 800 > 1000 whatever answers
    usage = LLMUsage.objects.get(provider=provider, collection=coll)
    assert (usage.tokens_reserved, usage.tokens_used) == (400, 2 * USED)


def test_the_operator_sets_scope_and_budgets_in_the_admin_without_losing_usage(coll, provider):
    root = factories.user("root", is_superuser=True, is_staff=True)
    group = Group.objects.create(name="llm-users")
    client = Client()
    client.force_login(root)
    url = f"/admin/judging/llmprovider/{provider.pk}/change/"
    page = client.get(url).content.decode()
    for field in ("allowed_collections", "allowed_groups", "token_budget", "spend_budget"):
        assert f'name="{field}"' in page
    LLMProvider.objects.filter(pk=provider.pk).update(tokens_used=500)  # a job meanwhile
    response = client.post(
        url,
        {
            "name": provider.name,
            "base_url": provider.base_url,
            "api_key_env": provider.api_key_env,
            "allowed_models": '["*"]',
            "allowed_private_hosts": '["127.0.0.1"]',
            "allowed_collections": [coll.pk],
            "allowed_groups": [group.pk],
            "price_input_per_1k": "0.25",
            "price_output_per_1k": "1",
            "token_budget": "100000",
            "spend_budget": "12.5",
            "collection_token_budget": "",
            "collection_spend_budget": "",
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    provider.refresh_from_db()
    assert (provider.token_budget, provider.spend_budget) == (100_000, Decimal("12.5"))
    assert list(provider.allowed_groups.all()) == [group]
    assert provider.tokens_used == 500


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_workers_of_two_jobs_sharing_a_provider_never_pass_its_budget(
    needs_postgres, fake, api_key
):
    """Three workers on each of two jobs (two collections), one provider budget."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.pg_threads import in_thread

    fake.script = lambda body, n: Reply(delay=0.01)
    colls = [factories.collection(slug) for slug in ("a", "b")]
    provider = factories.llm_provider(fake.url, name="shared", api_key_env=KEY_ENV)
    jobs = []
    for coll in colls:
        factories.pool(coll, 4, 5)
        judge = factories.llm_judge(f"llm-{coll.slug}")
        judge.llm_provider = provider
        judge.decoding = {"max_tokens": 40}
        judge.save()
        judge.collections.add(coll)
        job = services_llm.llm_job_create(collection=coll, judge=judge, concurrency=3)
        assert runner.plan(job, chunk_pairs=3)
        jobs.append(job)
    bound = _bound(jobs[0].judge, colls[0])
    _set(provider, token_budget=2 * bound + 15 * USED)  # well short of the 40 pairs

    def work(job_id: int) -> None:
        runner.work(LLMJob.objects.get(pk=job_id), flush_seconds=0.05, lease_seconds=30)

    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(in_thread(work), job.pk) for job in jobs for _ in range(3)]
        for future in futures:
            future.result(timeout=120)
    provider.refresh_from_db()
    sent = len(fake.requests)
    assert provider.tokens_used == sent * USED <= provider.token_budget
    assert provider.tokens_reserved == 0
    # Workers waited for each other's answers to give back room: the budget was used up.
    assert provider.token_budget - provider.tokens_used < bound
    assert 15 <= sent < 40
    usage = dict(LLMUsage.objects.values_list("collection__slug", "tokens_used"))
    assert sum(usage.values()) == provider.tokens_used
    for job in jobs:
        job.refresh_from_db()
        assert job.status in ("failed", "done")
        assert usage.get(job.collection.slug, 0) == job.done * USED
    assert any(job.error.startswith("Budget reached") for job in jobs)
    pairs = [(r["body"]["messages"][-1]["content"]) for r in fake.requests]
    assert len(pairs) == len(set(pairs))  # no pair asked twice
    assert Judgment.objects.count() == sent
