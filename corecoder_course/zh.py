"""The course helpers of the Chinese edition: the same helpers, speaking Chinese.

    from corecoder_course.zh import (Asker, Chain, Delegation, Gauge, NOTES_SERVER, Timeline,
                                     Transcribed, as_program, beside, call_timeline, check,
                                     consent_buttons, context_gauge, delegation_tree,
                                     explore_edits, outline, record, scrub_stream, session_log,
                                     show, step_through, undo_stack, wire_view, workdir)

A Chinese chapter imports its helpers from here, in its one cell tagged `language`;
every other code cell is the English chapter's, character for character. `check`
gives its verdict and hints in Chinese (and `beside` its comparison), `step_through` labels
its rounds in Chinese, and `explore_edits`, `scrub_stream`, `context_gauge`,
`call_timeline`, `delegation_tree` and `wire_view` their tables, `consent_buttons` its
questions, `undo_stack` its stack and `session_log` its rows; chapter 10's `your_engine`,
`tour`, `the_long_task`, `your_tests` and `lab` what they print.
What they show of the engine and the model (messages, tool results, code) stays as it is:
it is what the model sees. (words.py says how.)
"""

from . import beside as _beside
from . import call_timeline as _call_timeline
from . import check as _check
from . import consent_buttons as _consent_buttons
from . import context_gauge as _context_gauge
from . import delegation_tree as _delegation_tree
from . import explore_edits as _explore_edits
from . import lab as _lab
from . import scrub_stream as _scrub_stream
from . import session_log as _session_log
from . import step_through as _step_through
from . import the_long_task as _the_long_task
from . import tour as _tour
from . import undo_stack as _undo_stack
from . import wire_view as _wire_view
from . import your_engine as _your_engine
from . import your_tests as _your_tests
from .gauge import Gauge
from .guard import Asker
from .guests import NOTES_SERVER, Chain, Transcribed, as_program
from .recording import outline, record
from .scratch import workdir
from .source import show
from .timeline import Timeline
from .tree import Delegation
from .words import in_language
from .yours import a_learner

check = in_language(_check, "zh")
beside = in_language(_beside, "zh")
step_through = in_language(_step_through, "zh")
explore_edits = in_language(_explore_edits, "zh")
scrub_stream = in_language(_scrub_stream, "zh")
context_gauge = in_language(_context_gauge, "zh")
call_timeline = in_language(_call_timeline, "zh")
delegation_tree = in_language(_delegation_tree, "zh")
consent_buttons = in_language(_consent_buttons, "zh")
undo_stack = in_language(_undo_stack, "zh")
session_log = in_language(_session_log, "zh")
wire_view = in_language(_wire_view, "zh")
your_engine = in_language(_your_engine, "zh")
tour = in_language(_tour, "zh")
the_long_task = in_language(_the_long_task, "zh")
your_tests = in_language(_your_tests, "zh")
lab = in_language(_lab, "zh")  # SPEAKING names these (a test holds it)

__all__ = ["NOTES_SERVER", "Asker", "Chain", "Delegation", "Gauge", "Timeline", "Transcribed",
           "a_learner", "as_program", "beside", "call_timeline", "check", "consent_buttons",
           "context_gauge", "delegation_tree", "explore_edits", "lab", "outline", "record",
           "scrub_stream", "session_log", "show", "step_through", "the_long_task", "tour",
           "undo_stack", "wire_view", "workdir", "your_engine", "your_tests"]
