"""The example agent (mock_agent) and its sweep spec (prove.toml, see `init --example`)."""
