"""The scale benchmark's settings (benchmarks/scale/run.py puts this folder on PYTHONPATH): Parley's
own settings, plus a bare JSON view at /bench/bare (the stack's floor) and a header counting the
queries of each request. Importable by any checkout being measured; never part of the product."""

from config.settings.base import *  # noqa: F403

ROOT_URLCONF = "scale_bench_urls"
MIDDLEWARE = ["scale_bench_urls.count_queries_middleware", *MIDDLEWARE]  # noqa: F405
