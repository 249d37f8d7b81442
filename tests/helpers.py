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


def run_and_kill(script: str, args: list[str], delay: float) -> None:
    """Run `python -c script args...`, wait for it to print "go", let it work `delay` seconds,
    then kill -9 it: the crash tests' way of stopping a writer at a random moment."""
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = child.stdout.readline()
    if line == b"go\n":
        time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert line == b"go\n", child.stderr.read().decode()


def call(name, **arguments) -> dict:
    """A tool call as a script's turn lists it."""
    return {"name": name, "arguments": arguments}


def results(agent) -> list[str]:
    """The tool results in the agent's history, in order."""
    return [m["content"] for m in agent.messages if m["role"] == "tool"]
