"""Chapter 10 · Your own engine: what it teaches of the engine. It builds nothing new: it
assembles the learner's own answers into an agent and runs it beside the shipped one, runs the
package's own tests against the learner's pieces, and switches each mechanism off to measure
what it was for (corecoder_course/yours.py and lab.py).
authoring/coverage.py says how a table is read."""

budget = 0  # it exports nothing

export = {}
show = {}
