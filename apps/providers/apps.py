from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "apps.providers"
    label = "providers"

    def ready(self) -> None:
        from django.core import checks

        from apps.providers.checks import check_providers

        # Validated at startup (runserver, migrate, check) rather than on the first request.
        checks.register(check_providers)
