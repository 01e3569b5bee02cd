from django.apps import AppConfig


class SnowidDjangoConfig(AppConfig):
    name = "snowid_django"
    default_auto_field = "django.db.models.BigAutoField"
