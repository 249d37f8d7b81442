"""Chapter 09 · Fork your own: what it teaches of the engine (a plan: the chapter is not
written yet). corecoder/course/authoring/coverage.py says how a table is read."""

budget = 0  # net lines its export cells may hold (the plan exports 0)

export = {}
show = {}
