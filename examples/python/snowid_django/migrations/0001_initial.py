from django.db import migrations, models

import snowid_django.models


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        # Creating the extension needs a superuser; usually it is there.
        migrations.RunSQL("CREATE EXTENSION IF NOT EXISTS snowid",
                          reverse_sql=migrations.RunSQL.noop),
        migrations.CreateModel(
            name="Order",
            fields=[
                ("id", snowid_django.models.SnowidAutoField(primary_key=True, serialize=False)),
                ("customer", models.TextField()),
            ],
            options={"db_table": "snowid_django_order"},
        ),
        # What db_default=... does from Django 5.0 on.
        migrations.RunSQL(
            "ALTER TABLE snowid_django_order ALTER COLUMN id SET DEFAULT snowid_nextval()",
            reverse_sql="ALTER TABLE snowid_django_order ALTER COLUMN id DROP DEFAULT"),
    ]
