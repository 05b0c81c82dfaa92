import pytest


@pytest.fixture(autouse=True)
def _needs_shared_data(shared_data):
    """Every integration test reads ../shared/data: fail with one clear message without it."""
    return shared_data
