"""Chapter 08 · Guarding the user's machine: what it teaches of the engine (a plan: the chapter
is not written yet). Consent and plan mode as gates, a copy before each change and undo, trust
of a cloned project, the project's instructions.
authoring/coverage.py says how a table is read."""

budget = 200  # net lines its export cells may hold (the plan exports 191)

export = {
    "permissions.py": (
        "PLAN_REFUSAL PlanMode Ask Consent Consent.__init__ Consent.before "
        "Consent._allowed Consent._remember"),
    "checkpoints.py": (
        "Snapshot snapshot Checkpoints Checkpoints.__init__ Checkpoints.before "
        "Checkpoints.save Checkpoints.undo Checkpoints._restore"),
    "instructions.py": "NAMES LIMIT instruction_files project_instructions _own_file",
    "workspace.py": "git_root project_root project_key",
}
show = {
    "checkpoints.py": (
        "MAX_BYTES KEEP CheckpointError Checkpoints.resume Checkpoints._locked "
        "Checkpoints._kept Checkpoints.after Checkpoints.note_left Checkpoints._identity "
        "Checkpoints._refusal Checkpoints._away digest"),
    "permissions.py": "Consent._load Consent._file",
    "trust.py": (
        "FILES ProjectConfig project_folder read_project_config is_trusted remember_trust "
        "untrusted_note _file _commands"),
}
