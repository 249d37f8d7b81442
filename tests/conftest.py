"""Fixtures shared by test files that start processes."""

import subprocess

import pytest


@pytest.fixture
def spawned(monkeypatch):
    """Every process started while the test runs; at the end, each must have exited."""
    started = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    yield started
    assert all(p.poll() is not None for p in started), "a process outlived its test"
