"""Issue 45 item 6: the text policy refuses control characters in names, titles and prose.

The audit stored ESC, ``\\x01`` and ``\\x7f`` in collection, team and judge names and in
guidelines. The class is fixed in :mod:`graded.textpolicy` (``name_problem``,
``prose_problem``, ``field_problems``, ``kind_problem``) and checked where every write
of such a text passes: the services (collections, teams, runs, imported and LLM judges,
guidelines and query instructions), the readers' one gate (query texts, document titles,
descriptions, narratives of files and JSON batches) and the admin's form fields. Each
endpoint and page below gets a name with each C0 control character (tab and line feed
aside), DEL and C1 characters: a 400 or a form error naming the field and the
character, never a 500, nothing stored.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graded import textpolicy
from judging.models import Collection, Document, FileImport, Judge, Query
from metrics.models import Run, Team
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
C = "/api/v1/collections/demo/"

#: Refused in names: C0 but tab and line feed (CR too), DEL, C1 (a sample of it).
NAME_REFUSED = [chr(c) for c in range(0x20) if c not in (9, 10)] + ["\x7f", "\x80", "\x85", "\x9b"]
#: Refused in prose: the same but a carriage return.
PROSE_REFUSED = [c for c in NAME_REFUSED if c != "\r"]


# --- the policy ---------------------------------------------------------------------------


@pytest.mark.parametrize("code", range(0xA0))
def test_which_characters_names_and_prose_refuse(code):
    char = chr(code)
    value = f"ab{char}c"
    control = code < 0x20 or 0x7F <= code <= 0x9F
    assert (textpolicy.name_problem(value) is not None) == (control and char not in "\t\n")
    assert (textpolicy.prose_problem(value) is not None) == (control and char not in "\t\n\r")


def test_the_message_names_the_field_the_character_and_its_position():
    assert textpolicy.name_problem("abc\x1bd", what="the name") == (
        "the name contains a control character (U+001B ESC) at position 4"
    )
    assert "(U+007F DEL) at position 1" in textpolicy.name_problem("\x7f")
    assert "(U+009B CSI)" in textpolicy.prose_problem("x\x9b")
    assert textpolicy.field_problems(names={"judge_name": "a\x01", "tag": None}) == {
        "judge_name": ["The judge name contains a control character (U+0001 SOH) at position 2."]
    }


def test_document_bodies_and_notes_keep_their_characters():
    """Corpus text is kept as given (only NUL and surrogates are refused there)."""
    assert textpolicy.kind_problem("body", "a\x0cb\x1b") is None
    assert textpolicy.kind_problem("note", "a\x1b") is None
    assert textpolicy.kind_problem("title", "a\x1b") is not None


# --- every endpoint and page that takes a name ----------------------------------------------


def _refused(response, field: str, char: str) -> None:
    assert response.status_code == 400, (repr(char), response.content[:400])
    errors = errors_of(response)
    wanted = f"control character ({textpolicy.character_name(char)})"
    if char == "\x00":  # refused earlier, by the request parsers (issue 32)
        wanted = "NUL character"
    assert any(e.get("field") == field and wanted in e["message"] for e in errors), errors


def _upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def _api_judge_body(arena, **fields):
    return {
        "name": "umbrela",
        "model": "gpt-x",
        "llm_provider": arena.llm.llm_provider.name,
        "prompt_template": "{query} {document}",
        "native_scale": ["no", "yes"],
        "scale_mapping": {"no": 0, "yes": 3},
        "collections": ["demo"],
        **fields,
    }


#: (what, field, refused characters, request given the arena and the value).
API_CASES = {
    "collection name": (
        "name",
        NAME_REFUSED,
        lambda a, v: a.client("cora").post(
            "/api/v1/collections/", {"slug": "fresh", "name": v}, format="json"
        ),
    ),
    "collection guidelines": (
        "guidelines",
        PROSE_REFUSED,
        lambda a, v: a.client("cora").post(
            "/api/v1/collections/",
            {"slug": "fresh", "name": "Fresh", "guidelines": v},
            format="json",
        ),
    ),
    "new team": (
        "name",
        NAME_REFUSED,
        lambda a, v: a.client("cora").post(C + "teams/", {"name": v}, format="json"),
    ),
    "team rename": (
        "name",
        NAME_REFUSED,
        lambda a, v: a.client("cora").patch(
            C + f"teams/{a.run.team_id}/", {"name": v}, format="json"
        ),
    ),
    "run tag": (
        "tag",
        NAME_REFUSED,
        lambda a, v: a.client("tess").post(
            C + "runs/",
            {"tag": v, "file": _upload("r.txt", b"q1 Q0 d1 1 2 t\n")},
            format="multipart",
        ),
    ),
    "run description": (
        "description",
        PROSE_REFUSED,
        lambda a, v: a.client("tess").post(
            C + "runs/",
            {"tag": "new", "description": v, "file": _upload("r.txt", b"q1 Q0 d1 1 2 t\n")},
            format="multipart",
        ),
    ),
    "run rename": (
        "tag",
        NAME_REFUSED,
        lambda a, v: a.client("tess").patch(C + f"runs/{a.run.pk}/", {"tag": v}, format="json"),
    ),
    "LLM judge name": (
        "name",
        NAME_REFUSED,
        lambda a, v: a.client("cora").post(
            "/api/v1/judges/", _api_judge_body(a, name=v), format="json"
        ),
    ),
    "LLM judge model": (
        "model",
        NAME_REFUSED,
        lambda a, v: a.client("cora").post(
            "/api/v1/judges/", _api_judge_body(a, model=v), format="json"
        ),
    ),
    "guidelines": (
        "guidelines",
        PROSE_REFUSED,
        lambda a, v: a.client("cora").put(C + "guidelines/", {"guidelines": v}, format="json"),
    ),
    "imported judge": (
        "judge_name",
        NAME_REFUSED,
        lambda a, v: a.client("cora").post(
            C + "qrels/",
            {"file": _upload("j.qrels", b"q1 0 d1 2\n"), "judge_name": v},
            format="multipart",
        ),
    ),
    "background import's judge": (
        "judge_name",
        NAME_REFUSED,
        lambda a, v: a.client("cora").post(
            C + "imports/",
            {"judgments": _upload("j.qrels", b"q1 0 d1 2\n"), "judge_name": v},
            format="multipart",
        ),
    ),
}


def _stored_anywhere(char: str) -> bool:
    texts = [
        *Collection.objects.values_list("name", "guidelines"),
        *Team.objects.values_list("name"),
        *Run.objects.values_list("tag", "description"),
        *Judge.objects.values_list("name", "model"),
        *Query.objects.values_list("text", "description"),
        *Document.objects.values_list("title"),
    ]
    return any(char in value for row in texts for value in row)


@pytest.mark.parametrize("case", list(API_CASES))
def test_every_api_write_of_a_name_refuses_each_control_character(arena, settings, case):
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 1  # the background import starts at once
    field, chars, send = API_CASES[case]
    counts = (Collection.objects.count(), Team.objects.count(), Run.objects.count())
    for char in chars:
        _refused(send(arena, f"ab{char}c"), field, char)
        assert not _stored_anywhere(char), repr(char)
    assert (Collection.objects.count(), Team.objects.count(), Run.objects.count()) == counts
    assert not FileImport.objects.exists()
    ok = send(arena, "a\tb" if field in ("name", "tag", "model", "judge_name") else "a\r\nb")
    assert ok.status_code in (200, 201, 202), (case, ok.content[:400])


@pytest.mark.parametrize("kind", ["queries", "documents"])
def test_titles_in_json_batches_and_files_are_refused_naming_the_line(arena, kind):
    cora = arena.client("cora")
    field = "text" if kind == "queries" else "title"
    ident = "qid" if kind == "queries" else "docno"
    for char in NAME_REFUSED[1:]:  # a NUL is the request parser's (issue 32's tests)
        batch = [{ident: "x1", field: "fine"}, {ident: "x2", field: f"ab{char}c"}]
        response = cora.post(C + f"{kind}/", batch, format="json")
        assert response.status_code == 400, (repr(char), response.content[:300])
        (error,) = errors_of(response)
        assert error.get("item", error.get("line")) == 2, error
        assert textpolicy.character_name(char) in error["message"]
    line = json.dumps({ident: "x3", field: "a\x1bb"}).encode() + b"\n"
    response = cora.post(
        C + f"{kind}/", {"file": _upload("f.jsonl", b"\n" + line)}, format="multipart"
    )
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["line"] == 2 and "U+001B ESC" in error["message"]
    assert not Query.objects.filter(external_id__startswith="x").exists()
    assert not Document.objects.filter(external_id__startswith="x").exists()


def test_descriptions_in_topic_files_are_prose(arena):
    cora = arena.client("cora")
    tsv = b"x1\ttitle\tline one\rstill one\tnarr\n"
    response = cora.post(C + "queries/", {"file": _upload("t.tsv", tsv), "format": "tsv"})
    assert response.status_code in (200, 201), response.content[:300]
    refused = b"x2\ttitle\tbad \x07 bell\tnarr\n"
    response = cora.post(C + "queries/", {"file": _upload("t.tsv", refused), "format": "tsv"})
    _refused_line = errors_of(response)
    assert response.status_code == 400 and "U+0007 BEL" in _refused_line[0]["message"]


PAGES = {
    "new collection": (
        lambda a: reverse("judging:collection_create"),
        lambda v: {"slug": "fresh", "name": v, "purpose": "internal", "judges_per_pair": 1},
        "cora",
    ),
    "run upload": (
        lambda a: reverse("metrics:run_create", args=["demo"]),
        lambda v: {"tag": v, "file": _upload("r.txt", b"q1 Q0 d1 1 2 t\n")},
        "tess",
    ),
    "new LLM judge": (
        lambda a: reverse("judging:judge_create", args=["demo"]),
        lambda v: {
            "name": v,
            "model": "gpt-x",
            "prompt_template": "{query} {document}",
            "native_scale": '["no", "yes"]',
            "scale_mapping": '{"no": 0, "yes": 3}',
            "decoding": "{}",
            "max_attempts": 3,
            "timeout_seconds": 20,
        },
        "cora",
    ),
    "guidelines": (
        lambda a: reverse("judging:guidelines_versions", args=["demo"]),
        lambda v: {"change": "guidelines", "g-guidelines": v, "g-note": "why"},
        "cora",
    ),
    "import files": (
        lambda a: reverse("judging:collection_import", args=["demo"]),
        lambda v: {
            "judge_name": v,
            "judge_kind": "human",
            "judgments": _upload("j.qrels", b"q1 0 d1 2\n"),
        },
        "cora",
    ),
}


@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_that_takes_a_name_shows_a_form_error(arena, client, page):
    url, data, who = PAGES[page]
    client.force_login(arena.users[who])
    chars = PROSE_REFUSED if page == "guidelines" else NAME_REFUSED
    if page == "new LLM judge":
        data_with = lambda v: {**data(v), "llm_provider": arena.llm.llm_provider.pk}  # noqa: E731
    else:
        data_with = data
    for char in chars[1:]:  # a NUL is refused by Django's form fields first
        response = client.post(url(arena), data_with(f"ab{char}c"))
        assert response.status_code in (200, 400), (page, repr(char), response.status_code)
        html = response.content.decode()
        assert f"control character ({textpolicy.character_name(char)})" in html, (page, char)
        assert not _stored_anywhere(char), (page, repr(char))


def test_the_admin_refuses_a_control_character_in_a_name(arena, client):
    admin = arena.users["cora"]
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    url = reverse("admin:judging_collection_change", args=[arena.coll.pk])
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and not isinstance(v, list)}
    data.update({"name": "De\x1bmo", "judges_per_pair": arena.coll.judges_per_pair})
    response = client.post(url, data)
    assert response.status_code == 200
    assert "control character (U+001B ESC)" in response.content.decode()
    arena.coll.refresh_from_db()
    assert "\x1b" not in arena.coll.name


def test_names_stored_before_the_check_still_render_escaped(arena, client):
    """Existing rows are not rewritten: pages show the name HTML-escaped (a control
    character as itself, which a browser does not act on), the API JSON-escapes it, and
    the next rename must give a clean name."""
    Team.objects.filter(pk=arena.run.team_id).update(name="<b>t1\x1b[31m</b>")
    api = arena.client("cora").get(C + "teams/")
    assert api.status_code == 200 and "\\u001b" in api.content.decode()
    client.force_login(arena.users["cora"])
    board = client.get(reverse("metrics:leaderboard", args=["demo"]))
    assert board.status_code == 200
    assert "&lt;b&gt;t1\x1b[31m&lt;/b&gt;" in board.content.decode()
    rename = arena.client("cora").patch(C + f"teams/{arena.run.team_id}/", {"name": "t1"})
    assert rename.status_code == 200 and Team.objects.get(pk=arena.run.team_id).name == "t1"


# --- fuzzed -------------------------------------------------------------------------------

CONTROLS = st.sampled_from([*NAME_REFUSED, "\x1b[2J", "\x00"])


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    head=st.text(max_size=12),
    control=CONTROLS,
    tail=st.text(max_size=12),
    case=st.sampled_from(["collection name", "new team", "run tag", "LLM judge name"]),
)
def test_fuzzed_names_are_never_a_500_and_never_stored(arena, head, control, tail, case):
    _, _, send = API_CASES[case]
    response = send(arena, head + control + tail)
    assert response.status_code in (400, 201), response.content[:300]
    assert not _stored_anywhere(control.strip() or control)
