"""Screenshot every page each role reaches, at 1366×768 and 390×844, and measure its length.

``python tools/screenshots.py [--out docs/screenshots] [--prefix after] [--no-shots]
[--only "judge1 · judgments"]``

Builds a throw-away SQLite database in a temporary folder with the demo (``load_demo``,
``load_demo_team``), then gives the demo some life so that every page has something to
show: judge1 grades every pooled pair as the reference qrels say, judge2 grades two
thirds of them with every fifth grade moved by one or two, team1 submits the three
demo runs, and the quality pages get twelve gold pairs, an LLM judge with a finished job
(three failures), a canary check and a version check. It serves the site with
``runserver`` on a free port, logs in once per role (coordinator, judge1, team1) and, for
each page at each size, records the document height in px and saves the first screen as
a PNG (desktop ones scaled to 3/4, all quantised to 32 colours with Pillow when it is
installed, so the whole set stays small). Prints a Markdown table of page lengths and
writes it as JSON beside the screenshots (``<prefix>lengths.json``).

Needs Debian's ``/usr/bin/chromium`` and Playwright's Python package (the browser tests'
setup). docs/ui.md shows the tables it printed before and after the page grammar.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parent.parent
VIEWPORTS = {"desktop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}
PASSWORDS = {"coordinator": "coordinator-demo", "judge1": "judge1-demo", "team1": "team1-demo"}
SLUG = "home-garden-demo"


def _setup(env: dict[str, str]) -> None:
    """Migrate, load the demo, then add judgments and runs (in a child Python)."""
    code = f"""
import random, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
call_command("load_demo", verbosity=0)
call_command("load_demo_team", verbosity=0)
from django.contrib.auth import get_user_model
from judging import services
from judging.models import Collection, PoolEntry
from metrics.models import Team
from metrics.services import run_submit
coll = Collection.objects.get(slug={SLUG!r})
ref = {{}}
for line in open({str(ROOT / "demo" / "qrels-reference.txt")!r}):
    qid, _, docno, grade = line.split()
    ref[(qid, docno)] = int(grade)
User = get_user_model()
j1 = services.judge_for_user(user=User.objects.get(username="judge1"))
j2 = services.judge_for_user(user=User.objects.get(username="judge2"))
rng = random.Random(7)
entries = PoolEntry.objects.filter(collection=coll).select_related("query", "document")
for n, e in enumerate(entries.order_by("pk")):
    g = ref.get((e.query.external_id, e.document.external_id), 0)
    services.judgment_record(judge=j1, query=e.query, document=e.document, grade=g)
    if n % 3:
        moved = g if n % 5 else min(4, max(0, g + rng.choice([-2, -1, 1, 2])))
        services.judgment_record(judge=j2, query=e.query, document=e.document, grade=moved)
team = Team.objects.get(collection=coll)
user = User.objects.get(username="team1")
for name in ("bm25-baseline", "dense-retriever", "hybrid-reranker"):
    data = open({str(ROOT / "demo" / "runs")!r} + "/" + name + ".txt", "rb").read()
    run_submit(collection=coll, team=team, tag=name, content=data, filename=name + ".txt",
               user=user)
# The quality pages: gold pairs, an LLM judge with a job, a canary and a version check.
from judging.llm.models import LLMFailure, LLMJob
from judging.models import Judge
from judging.quality.models import (
    CanaryCheck, CanaryResult, GoldPair, VersionCheck, VersionCheckResult)
boss = User.objects.get(username="coordinator")
for e in list(entries.order_by("pk"))[:12]:
    GoldPair.objects.create(collection=coll, query=e.query, document=e.document,
        grade=ref.get((e.query.external_id, e.document.external_id), 0),
        reason="Matches the narrative." if e.pk % 2 else "", created_by=boss)
llm = Judge.objects.create(kind=Judge.Kind.LLM, name="llm-demo", provider="demo",
                           model="llm-demo")
llm.collections.add(coll)
pairs = list(entries.order_by("pk"))
job = LLMJob.objects.create(collection=coll, judge=llm, status="done", total=len(pairs),
    done=len(pairs) - 3, failed=3, prompt_tokens=91234, completion_tokens=4567, created_by=boss)
for e in pairs[:3]:
    LLMFailure.objects.create(job=job, query=e.query, document=e.document,
        reason="No grade in the answer.", raw_answer="I think it is somewhat relevant.")
canary = CanaryCheck.objects.create(collection=coll, judge=llm, version="v-demo", seed=1,
                                    status="done", created_by=boss)
for n, kind in enumerate(["stuffing", "injection"] * 5):
    CanaryResult.objects.create(canary_check=canary, kind=kind, qid=pairs[n].query.external_id,
        title="Household tips", text="Chores. " * 40, grade=(0, 3)[n % 3 == 0],
        raw_answer="##final score: 2")
check = VersionCheck.objects.create(collection=coll, judge=llm, version="v-demo",
                                    status="done", created_by=boss)
for n, e in enumerate(pairs[:30]):
    g = ref.get((e.query.external_id, e.document.external_id), 0)
    VersionCheckResult.objects.create(version_check=check, query=e.query, document=e.document,
        grade=(g + n % 2) % 4, human_grade=g)
"""
    subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pages(env: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """Return (name, path) of each page per role, with ids read from the database."""
    code = f"""
import json, django
django.setup()
from django.urls import reverse
from judging.models import Collection, Judgment, Judge
from metrics.models import Run
coll = Collection.objects.get(slug={SLUG!r})
s = coll.slug
runs = list(Run.objects.filter(collection=coll).order_by("pk"))
q = coll.queries.order_by("pk").first()
judgment = Judgment.objects.filter(judge__user__username="judge1").order_by("pk").first()
j2 = Judge.objects.get(user__username="judge2")
common = [("home", reverse("judging:home"))]
common.append(("collection", reverse("judging:collection_detail", args=[s])))
metrics = [
    ("leaderboard", reverse("metrics:leaderboard", args=[s])),
    ("run", reverse("metrics:run_detail", args=[s, runs[0].pk])),
    ("run-query", reverse("metrics:run_query", args=[s, runs[0].pk, q.pk])),
    ("compare", reverse("metrics:compare", args=[s]) + f"?a={{runs[2].pk}}&b={{runs[0].pk}}"),
    ("difficulty", reverse("metrics:difficulty", args=[s])),
]
judging = [
    ("judge", reverse("judging:judge_next", args=[s])),
    ("judgments", reverse("judging:judgment_list", args=[s])),
    ("profile", reverse("profile")),
]
from judging.models import Judgment as J
pair = J.objects.filter(judge=j2).exclude(grade=None).order_by("pk").first()
out = {{
    "team1": common + metrics + [("run-create", reverse("metrics:run_create", args=[s]))],
    "judge1": common + judging + [
        ("judgment-edit", reverse("judging:judgment_update", args=[s, judgment.pk]))],
    "coordinator": common + judging + metrics + [
        ("settings", reverse("metrics:collection_update", args=[s])),
        *[(f"settings-{{t}}", reverse("metrics:collection_update", args=[s]) + f"?tab={{t}}")
          for t in ("visibility", "depth", "pooling", "aggregation", "card", "quotas")],
        ("agreement", reverse("judging:collection_agreement", args=[s])),
        *[(f"agreement-{{t}}", reverse("judging:collection_agreement", args=[s]) + f"?tab={{t}}")
          for t in ("coverage", "agreement")],
        ("collection-stability", reverse("judging:collection_detail", args=[s]) + "?tab=stability"),
        ("compare-holm", reverse("metrics:compare", args=[s])
         + f"?baseline={{runs[0].pk}}&runs={{runs[1].pk}}&runs={{runs[2].pk}}"),
        ("llm-jobs-list", reverse("judging:llmjob_create", args=[s]) + "?tab=jobs"),
        ("disagreements", reverse("judging:disagreement_list", args=[s])),
        ("adjudicate",
         reverse("judging:pair_adjudicate", args=[s, pair.query_id, pair.document_id])),
        ("remove-labels", reverse("judging:judge_labels_remove", args=[s, j2.pk])),
        ("llm-agreement", reverse("metrics:llm_agreement", args=[s])),
        ("pool", reverse("metrics:pool", args=[s])),
        ("stability", reverse("metrics:stability", args=[s])),
        ("pairs-add", reverse("judging:poolentry_create", args=[s])),
        ("documents-import", reverse("judging:document_import", args=[s])),
        ("collection-import", reverse("judging:collection_import", args=[s])),
        ("collection-create", reverse("judging:collection_create")),
        ("llm-job", reverse("judging:llmjob_create", args=[s])),
    ],
}}
from judging.llm.models import LLMJob
from judging.quality.models import CanaryCheck, VersionCheck
llm = Judge.objects.get(name="llm-demo")
out["coordinator"] += [
    ("judges", reverse("judging:judge_list", args=[s])),
    ("gold", reverse("judging:gold_list", args=[s])),
    ("gold-pairs", reverse("judging:gold_list", args=[s]) + "?tab=pairs"),
    ("llm-job", reverse("judging:llmjob_detail",
                        args=[s, LLMJob.objects.filter(collection=coll).first().pk])),
    ("canary-check", reverse("judging:canary_check_detail",
                             args=[s, CanaryCheck.objects.filter(collection=coll).first().pk])),
    ("versions", reverse("judging:version_list", args=[s, llm.pk])),
    ("version-check", reverse("judging:version_check_detail",
                              args=[s, VersionCheck.objects.filter(collection=coll).first().pk])),
    ("history", reverse("judging:judgment_history", args=[s, pair.query_id, pair.document_id])),
]
print(json.dumps(out))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _shrink(path: Path) -> None:
    """Scale a desktop PNG to 3/4 and quantise it to 32 colours (Pillow, when installed)."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        rgb = image.convert("RGB")
    if rgb.width > 1000:
        rgb = rgb.resize((rgb.width * 3 // 4, rgb.height * 3 // 4), Image.Resampling.LANCZOS)
    rgb.quantize(colors=32, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def main() -> None:
    """Build the demo, serve it, and measure and screenshot every page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--prefix", default="", help="file name prefix, e.g. 'before-'")
    parser.add_argument("--no-shots", action="store_true", help="measure only")
    parser.add_argument("--full", action="store_true", help="shoot whole pages, not first screens")
    parser.add_argument(
        "--only", action="append", default=[], help="pages whose 'role · name' holds this text"
    )
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="graded-shots-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
        "MEDIA_ROOT": str(tmp / "media"),
        "PYTHONPATH": str(ROOT),
    }
    _setup(env)
    pages = _pages(env)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    lengths: dict[str, dict[str, int]] = {}
    try:
        for _ in range(100):
            try:
                urlopen(base + "/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
            )
            for vp_name, viewport in VIEWPORTS.items():
                for role, role_pages in pages.items():
                    context = browser.new_context(base_url=base, viewport=viewport)
                    page = context.new_page()
                    page.goto("/accounts/login/")
                    page.fill("input[name=username]", role)
                    page.fill("input[name=password]", PASSWORDS[role])
                    page.click("button:has-text('Log in')")
                    page.wait_for_selector(".site-user")
                    for name, path in role_pages:
                        label = f"{role} · {name}"
                        if args.only and not any(text in label for text in args.only):
                            continue
                        page.goto(path)
                        page.wait_for_load_state("networkidle")
                        height = page.evaluate("document.documentElement.scrollHeight")
                        lengths.setdefault(label, {})[vp_name] = height
                        if not args.no_shots:
                            shot = out / f"{args.prefix}{role}-{name}-{vp_name}.png"
                            page.screenshot(path=str(shot), full_page=args.full)
                            _shrink(shot)
                    context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait()
    (out / f"{args.prefix}lengths.json").write_text(json.dumps(lengths, indent=1) + "\n")
    print("| Page | 1366×768 | 390×844 |\n|---|---:|---:|")
    for name, sizes in lengths.items():
        print(f"| {name} | {sizes.get('desktop', '')} | {sizes.get('phone', '')} |")


if __name__ == "__main__":
    main()
