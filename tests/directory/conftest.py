import pytest

from tests.directory.api import DirectoryClient


@pytest.fixture
def directory_for():
    """`directory_for(user)`: a directory API client authenticated as `user`."""
    return DirectoryClient
