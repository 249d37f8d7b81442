"""The exercises' checkers, one module per chapter (`ch01.py` holds every `ch01.*` check)."""
