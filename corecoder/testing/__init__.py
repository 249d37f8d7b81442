"""Test infrastructure that ships with the engine: providers, faults and all, that run offline.

    serve.py    ScriptServer: a loopback OpenAI-compatible HTTP server that replays a script,
                so the real client (corecoder.llm), streaming included, runs with no key
    faults.py   the faults a script can play (rate limits, dropped streams, a bad key...),
                one vocabulary for the server and for FaultyScriptedLLM

Nothing in the engine imports this package: its users are the tests, the benchmarks,
the course and whoever tests an agent of their own (`python -m corecoder.testing.serve`).
"""

from .faults import FAULTS, FaultyScriptedLLM
from .serve import ScriptServer

__all__ = ["FAULTS", "FaultyScriptedLLM", "ScriptServer"]
