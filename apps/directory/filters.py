"""The scan parameters of GET /users (django-filter); they travel in the page token after page one."""

import django_filters

from apps.directory.pagination import NAME_FILTER_MAX_LENGTH


class DirectoryUserFilter(django_filters.FilterSet):
    # Not stripped: " Lee" (a surname) is not "Lee".
    name = django_filters.CharFilter(
        field_name="full_name", lookup_expr="icontains", max_length=NAME_FILTER_MAX_LENGTH, strip=False
    )
