"""write_file: create a file, or replace one whole, atomically.

The write goes through `atomic_write`, so a crash or an interrupt leaves the old
file or the new one, never half of each. Through a symlink, the file it points to
is written and the link stays a link.
"""

from __future__ import annotations

from ..files import atomic_write, in_words
from ..tool import Tool, ToolError
from ..workspace import Workspace


class WriteFile(Tool):
    name = "write_file"
    description = (
        "Create a file, or replace the whole content of an existing one, with `content` exactly as "
        "given (missing parent directories are created). To change part of an existing file, use "
        "edit_file instead."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string",
                     "description": "File to write, relative to the working directory."},
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }
    mutating = True

    def run(self, ws: Workspace, path: str, content: str) -> str:
        target = ws.resolve(path)
        shown = ws.show(target)
        if target.is_dir() or path.endswith("/"):
            raise ToolError(f"{shown} is a directory; give the path of a file inside it")
        verb = "overwrote" if target.exists() else "created"
        try:
            note = atomic_write(target, content, shared=True)
        except OSError as e:  # e.g. a parent "directory" that is a file, or no permission
            raise ToolError(f"cannot write {shown}: {in_words(e, target, ws.show, 'write')}") from e
        size = len(content.encode("utf-8"))
        lines = count_lines(content)
        done = (f"{verb} {shown}: {lines} line{'' if lines == 1 else 's'} "
                f"({size:,} byte{'' if size == 1 else 's'})")
        return f"{done} {note}" if note else done


# --- defences: what a write reports ---------------------------------------------------------


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a last line without a newline still counts."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)
