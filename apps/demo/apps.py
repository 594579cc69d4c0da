from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo organization `make run` creates on an empty database (bootstrap_demo). Above every
    other app: it uses them all."""

    name = "apps.demo"
    label = "demo"
