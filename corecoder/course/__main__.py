"""python -m corecoder.course: the authoring tools' command (authoring/__main__.py)."""

import sys

from .authoring.__main__ import main

sys.exit(main())
