"""Chapter 00 · A tour: what it teaches of the engine. It builds nothing: it runs the finished
engine (build_agent) on the demo project and shows the loop's source.
authoring/coverage.py says how a table is read."""

budget = 0  # it exports nothing

export = {}
show = {"agent.py": "Agent.run"}
skip = [
    {"why": "the demo is a script for the finished engine: the tour runs it, no chapter builds it",
     "demo/__init__.py": "PROJECT TASK SCRIPT copy_project run_demo"},
    {"why": ("the lazy imports that keep `import corecoder` and `corecoder --version` fast "
             "(ARCHITECTURE principle 7): plumbing, measured by benchmarks/cold_start.py"),
     "__init__.py": "__version__ _HOMES __all__ __getattr__ __dir__"},
    {"why": "a package's list of its public names: nothing to teach",
     "mcp/__init__.py": "__all__", "testing/__init__.py": "__all__",
     "tools/__init__.py": "__all__"},
]
