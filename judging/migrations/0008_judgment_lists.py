from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("judging", "0007_hostile_input")]

    operations = [
        migrations.AddField(
            model_name="collection",
            name="judgments_published",
            field=models.BooleanField(
                default=False,
                help_text="When on, team members may download the live judgment list "
                "(judges never can: judging stays blind).",
            ),
        ),
    ]
