"""Helpers for the course notebooks: what a chapter calls, in one import.

    from corecoder_course import (Asker, Chain, Delegation, Gauge, NOTES_SERVER, Timeline,
                                  Transcribed, as_program, beside, call_timeline, check,
                                  consent_buttons, context_gauge, delegation_tree, explore_edits,
                                  outline, record, scrub_stream, session_log, show, step_through,
                                  undo_stack, wire_view, workdir)

    show(obj)                 the real source of a package object, highlighted
    check(name, answer)       run an exercise's offline checks; prints ✓ or a hint
    beside(name, answer)      the reveal: your answer beside the engine's, on the same inputs
    record(agent)             record an agent's rounds (a subscriber to its events)
    outline(messages)         a history as one short line per message
    step_through(recording)   a widget to step through the rounds, and the same as text
    explore_edits(text, tries) edit_file tried on a sample: a widget, and a table as text
    scrub_stream(deltas)      a stream's tool-call chunks assembled one by one: a slider, a table
    Gauge(compactor)          a context policy around a Compactor that records every round
    context_gauge(gauge)      how full the window was, round by round: bars, and rows as text
    Timeline()                a subscriber that numbers every call's steps in the order they happen
    call_timeline(timeline)   the steps of a batch's calls: a lane per call, and the list as text
    Delegation()              a subscriber that keeps a parent's calls and each worker's apart
    delegation_tree(tree)     parent → workers → their calls: a fold per worker, a tree as text
    as_program(fn, folder)    a function written out as a program of its own (a hook, a server)
    NOTES_SERVER              a small MCP server, the standard library's only, with switches
    Transcribed(spec, root)   an MCPClient that keeps every line that crossed the wire
    Chain()                   each call's way through the gates, and how it ended
    wire_view(client, chain)  the JSON-RPC lines beside the calls: a widget, and as text
    Asker(answers)            the user consent asks, answering from a script, each question kept
    consent_buttons(run, answers) a run's questions, each with its answer's buttons (a press runs
                              it again with that answer), and the questions as text
    undo_stack(checkpoints)   the checkpoints kept, newest first, with an Undo button; as text
    session_log(path)         a session file's lines as rows (kind, round, what each holds; a
                              skipped line says why), each opening its line; the rows as text
    workdir(name)             a fresh scratch folder, notebooks/.work/<name>
    your_engine(folder)       your kept answers as an engine: which pieces are yours (chapter 10)
    a_learner(folder, ids)    a folder of answers written as the chapters' own solutions
    tour(engine, folder)      the tour's task on the shipped engine and on yours: where they part
    the_long_task(engine)     the lab's long task on both engines: their figures, where they part
    your_tests(engine)        the package's own tests, run against each of your pieces
    lab()                     the ablation lab: one task, each mechanism switched off in turn

The Chinese notebooks import the same helpers from `corecoder_course.zh`, where they speak
Chinese (words.py). Nothing here imports IPython or ipywidgets until a cell needs them.
The tools that write the course (student edition, sync, execute) are apart, in
`authoring`, run as `python -m authoring`.
"""

from .checks import check
from .explorer import explore_edits
from .gauge import Gauge, context_gauge
from .guard import Asker, consent_buttons, undo_stack
from .guests import NOTES_SERVER, Chain, Transcribed, as_program, wire_view
from .kit import beside
from .lab import lab
from .logview import session_log
from .recording import outline, record
from .scratch import workdir
from .scrubber import scrub_stream
from .source import show
from .timeline import Timeline, call_timeline
from .tree import Delegation, delegation_tree
from .viewer import step_through
from .yours import a_learner, the_long_task, tour, your_engine, your_tests

__all__ = ["NOTES_SERVER", "Asker", "Chain", "Delegation", "Gauge", "Timeline", "Transcribed",
           "a_learner", "as_program", "beside", "call_timeline", "check", "consent_buttons",
           "context_gauge", "delegation_tree", "explore_edits", "lab", "outline", "record",
           "scrub_stream", "session_log", "show", "step_through", "the_long_task", "tour",
           "undo_stack", "wire_view", "workdir", "your_engine", "your_tests"]
