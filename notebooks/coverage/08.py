"""Chapter 08 · Guarding the user's machine: what it teaches of the engine. Per project: the git
root and its key. Consent and plan mode as gates; a copy before each change and an undo that
never costs the user their own work; the gates in the order of authority; trust of a cloned
project; the project's instructions, read once from its own files.
authoring/coverage.py says how a table is read."""

budget = 196  # net lines its export cells may hold

export = {
    "permissions.py": (
        "PLAN_REFUSAL PlanMode Ask Consent Consent.__init__ Consent.before "
        "Consent._allowed Consent._remember"),
    "checkpoints.py": (
        "Snapshot snapshot Checkpoints Checkpoints.__init__ Checkpoints.before "
        "Checkpoints.save Checkpoints.undo Checkpoints._restore"),
    "instructions.py": (
        "NAMES REPO_WIDE LIMIT instruction_files project_instructions _own_file"),
    "workspace.py": "git_root project_root project_key",
}
show = {
    "checkpoints.py": (
        "CheckpointError Checkpoints.resume Checkpoints._locked Checkpoints._kept "
        "Checkpoints.after Checkpoints.note_left Checkpoints._identity Checkpoints._refusal "
        "Checkpoints._away digest"),
    "permissions.py": "Consent._load Consent._file",
    "instructions.py": (
        "read_instructions Nested git_status"),
    "trust.py": (
        "ProjectConfig project_folder read_project_config is_trusted remember_trust "
        "untrusted_note _file _commands"),
}
skip = [
    {"why": "the bounds of the undo store (a file's size past which it is not copied, the "
            "checkpoints kept per project), imported by the export cell and named in the prose",
     "checkpoints.py": "MAX_BYTES KEEP"},
    {"why": "the names of the project's own configuration files, which the prose names",
     "trust.py": "FILES"},
]
