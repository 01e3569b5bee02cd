"""A Django model whose primary key is filled by the database:
DEFAULT snowid_nextval().

Django before 5.0 has no database defaults (Field.db_default is 5.0+), so
the key is a BigAutoField whose column is a plain bigint instead of
bigserial, and the migration sets its default (0001_initial.py).  Being
an AutoField, Django leaves it out of INSERT and reads it back with
RETURNING, for save() and for bulk_create() alike (PostgreSQL).
"""

from django.db import models


class SnowidAutoField(models.BigAutoField):
    """A bigint primary key filled by DEFAULT snowid_nextval()."""

    def db_type(self, connection):
        return "bigint"

    def rel_db_type(self, connection):
        return "bigint"


class Order(models.Model):
    id = SnowidAutoField(primary_key=True)
    customer = models.TextField()

    class Meta:
        db_table = "snowid_django_order"
