"""Small tools for tests of the loop: each does one predictable thing."""

from corecoder.tools.base import Tool, ToolError


class Echo(Tool):
    name = "echo"
    description = "Return the text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
                  "required": ["text"], "additionalProperties": False}

    def __init__(self):
        self.ran = []

    def run(self, ws, text, times=1):
        self.ran.append(text)
        return text * times


class Boom(Tool):
    """Fails the way the environment fails: raises, or is interrupted by the user."""

    name = "boom"
    description = "Raise."
    parameters = {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"],
                  "additionalProperties": False}

    def run(self, ws, kind):
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind == "tool_error":
            raise ToolError("the disk said no")
        raise ValueError("something broke")
