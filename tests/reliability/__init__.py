"""The reliability suite (issue #7): what the engine survives, tried systematically.

Each module is one family of trials; RESULTS.md, beside this file, is the table of what was
tried and what survived, rewritten by conftest.py at the end of every full run of this folder.
"""
