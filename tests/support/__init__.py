"""Helpers of the tests: the local Hub and its repositories, tiny models, a scripted LLM server (and its
synthetic-STS answers), a tiny evaluation suite, and the shared pytest fixtures
(:mod:`tests.support.fixtures`, loaded by tests/conftest.py)."""
