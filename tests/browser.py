"""A real browser for tests: headless Chromium driven over the DevTools protocol.

The site's tests and JupyterLab's read what a reader sees, not what a build wrote. websocket-client is
already a Jupyter dependency, so no browser automation package is needed; chromium comes from the
system (.ci/run installs it, with fonts-noto-cjk so that Chinese does not render as boxes).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path


class Browser:
    """Headless Chromium driven over the DevTools protocol (websocket-client, already a Jupyter dependency)."""

    FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-port=0", "--window-size=1280,900"]

    def __init__(self, exe: str):
        import websocket

        self.profile = tempfile.mkdtemp(prefix="chromium-")
        self.process = subprocess.Popen([exe, *self.FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"  # chromium writes its port here
        self._wait(lambda: port_file.exists() and port_file.read_text().strip(), 30, "chromium did not start")
        port = port_file.read_text().split()[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        target = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], suppress_origin=True, timeout=30)
        self.calls = 0
        # headless, no window has the focus: a page that follows it (JupyterLab's current notebook) needs it
        self.call("Emulation.setFocusEmulationEnabled", enabled=True)
        self.call("Page.enable")  # its events: a dialog ("leave this page?") is answered, never waited on

    @staticmethod
    def _wait(condition, seconds: float, message: str):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if value := condition():
                return value
            time.sleep(0.1)
        raise AssertionError(message)

    def call(self, method: str, **params) -> dict:
        self.calls += 1
        self.ws.send(json.dumps({"id": self.calls, "method": method, "params": params}))
        asked = self.calls
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("method") == "Page.javascriptDialogOpening":  # it would block the page: accept it
                self.calls += 1
                self.ws.send(json.dumps({"id": self.calls, "method": "Page.handleJavaScriptDialog",
                                         "params": {"accept": True}}))
            if reply.get("id") == asked:
                return reply.get("result", {})

    def evaluate(self, expression: str):
        # an expression that throws, or whose value cannot be sent back, is None
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True).get("result", {}).get("value")

    def wait(self, until: str, seconds: float = 20):
        """Wait until the JavaScript expression `until` is truthy; return its value."""
        return self._wait(lambda: self.evaluate(until), seconds, f"timed out waiting for {until}")

    def click(self, expression: str) -> None:
        """Click, as a person does (press and release at its centre), the element `expression` finds."""
        self.evaluate(f"{expression}.scrollIntoView({{block: 'center'}}) || 1")
        time.sleep(0.3)  # a page that draws what comes into view (JupyterLab does) settles first
        box = self.evaluate(f"(() => {{ const r = {expression}.getBoundingClientRect(); "
                            "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def open(self, url: str, until: str, seconds: float = 20):
        self.call("Page.navigate", url=url)
        return self.wait(until, seconds)

    def close(self):
        self.ws.close()
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)
