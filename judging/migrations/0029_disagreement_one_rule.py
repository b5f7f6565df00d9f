"""Recompute which pool pairs are open under the one disagreement rule (judging.disagreement).

Routing used to send a pair to one more judge when its grades had no strict majority,
two grades one apart included, while the disagreement queue listed only pairs whose
grades spread by the collection's ``disagreement_spread``. Both follow the spread now; the
stored ``is_open`` flags and progress counters are rebuilt to match.
"""

from django.db import migrations, models


def rebuild(apps, schema_editor):
    """Rebuild is_open and the progress counters of every collection."""
    from types import SimpleNamespace

    from judging.progress import counters as progress

    names = ("Collection", "Document", "Judgment", "JudgeProgress", "PoolEntry", "PoolProgress")
    m = SimpleNamespace(**{name: apps.get_model("judging", name) for name in names})
    for collection_id in m.Collection.objects.values_list("pk", flat=True):
        progress.rebuild(collection_id=collection_id, m=m)


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0028_llm_version_checks"),
    ]

    operations = [
        migrations.AlterField(
            model_name="collection",
            name="disagreement_spread",
            field=models.PositiveSmallIntegerField(
                default=2,
                help_text="A pair whose grades differ by at least this much is a disagreement: "
                "it is listed for adjudication and, with escalation on, sent to one more judge "
                "(one rule for both; see judging.disagreement).",
            ),
        ),
        migrations.RunPython(rebuild, migrations.RunPython.noop),
    ]
