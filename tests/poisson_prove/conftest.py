"""The real HTTP server of the chaos tests, shared."""

from tests.poisson_prove.chaos.conftest import tool_server  # noqa: F401 - a fixture
