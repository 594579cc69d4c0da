import pytest


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)
