"""CoreCoder: a small, real coding agent, built to be read.

Nothing imported here pulls in the `openai` client, `rich` or `prompt_toolkit`:
`import corecoder` and `corecoder --version` stay fast (ARCHITECTURE principle 7).
"""

from .agent import Agent
from .messages import IllegalHistory, Reply, ToolCall, Usage, check_history
from .scripted import FunctionLLM, ScriptedLLM, ScriptError
from .tools import Bash, EditFile, Glob, Grep, ReadFile, TodoWrite, Tool, ToolError, WriteFile, default_tools
from .workspace import Workspace

__version__ = "0.1.0"

__all__ = [
    "Agent", "Bash", "EditFile", "FunctionLLM", "Glob", "Grep", "IllegalHistory", "ReadFile", "Reply",
    "ScriptError", "ScriptedLLM", "TodoWrite", "Tool", "ToolCall", "ToolError", "Usage", "Workspace",
    "WriteFile", "__version__", "check_history", "default_tools",
]
