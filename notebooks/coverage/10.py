"""Chapter 10 · Your own engine: what it teaches of the engine (a plan: the chapter is not
written yet). It builds nothing new: it assembles the learner's own answers into an agent and
runs it beside the shipped one, and switches each mechanism off to measure what it was for.
authoring/coverage.py says how a table is read."""

budget = 0  # it exports nothing

export = {}
show = {}
