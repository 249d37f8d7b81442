"""What the user types while a turn runs: a line said to the turn, or Esc Esc to stop it.

Between turns, prompt_toolkit reads the terminal. During a turn this reads it, a key at a time
(the terminal's own line editing and echo are off; Ctrl+C still signals): a line ended with
Enter goes to the agent (`Agent.steer`), which lets it in at the next step boundary (a command,
`/plan` say, waits for the turn to end and runs then); the keys
typed so far show under the streaming answer or beside the spinner; Esc Esc stops the turn as
Ctrl+C does (the same SIGINT, so the same path: commands killed, every call answered). A
consent question pauses it: prompt_toolkit reads the answer. What is typed but not sent when
the turn ends is put back under the next prompt.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import signal
import threading

ESC, ENTER, ERASE, KILL_LINE = 0x1B, (0x0A, 0x0D), (0x7F, 0x08), 0x15


class Steering:
    def __init__(self, agent, show, fd: int | None):
        self.agent = agent
        self.show = show  # show(typed, sent): the renderer's; sent is a line just said
        self.fd = fd  # the terminal's; None: not a terminal, nothing is read
        self.typed = ""
        self.commands: list[str] = []  # lines typed as commands (/plan): run after the turn
        self.reading = threading.Lock()  # held while reading: a question takes it to pause
        self.done = threading.Event()
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.escape = ""  # an escape sequence (an arrow key) being read, to be ignored whole

    def __enter__(self) -> Steering:
        if self.fd is not None:
            import termios

            self.saved = termios.tcgetattr(self.fd)
            keys = termios.tcgetattr(self.fd)
            keys[3] &= ~(termios.ICANON | termios.ECHO)  # a key at a time, echoed by us
            keys[6][termios.VMIN], keys[6][termios.VTIME] = 1, 0
            termios.tcsetattr(self.fd, termios.TCSANOW, keys)
            self.thread = threading.Thread(target=self.read, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            import termios

            self.done.set()
            self.thread.join()
            termios.tcsetattr(self.fd, termios.TCSANOW, self.saved)

    @contextlib.contextmanager
    def paused(self):
        """While a consent question reads the terminal: no key is taken from it."""
        with self.reading:
            yield

    def read(self) -> None:
        while not self.done.is_set():
            with self.reading:
                ready = select.select([self.fd], [], [], 0.05)[0]
                data = os.read(self.fd, 1024) if ready else b""
            for byte in data:
                self.key(byte)

    def key(self, byte: int) -> None:
        if byte == ESC:
            if self.escape == "\x1b":  # Esc Esc: stop the turn, as Ctrl+C would
                os.kill(os.getpid(), signal.SIGINT)
            self.escape = "" if self.escape == "\x1b" else "\x1b"
        elif self.escape:  # an arrow key (Esc [ A), Alt+key (Esc x): ignored whole
            self.escape += chr(byte)
            ended = len(self.escape) > 2 and 0x40 <= byte <= 0x7E
            if ended or (len(self.escape) == 2 and chr(byte) not in "[O"):
                self.escape = ""
        elif byte in ENTER:
            text, self.typed = self.typed.strip(), ""
            if text.startswith("/"):  # a command is the REPL's, not the model's: after the turn
                self.commands.append(text)
            elif text:
                self.agent.steer(text)
            self.show("", text)
        elif byte in ERASE:
            self.typed = self.typed[:-1]
            self.show(self.typed, "")
        elif byte == KILL_LINE:
            self.typed = ""
            self.show("", "")
        elif byte >= 0x20:  # a character (a UTF-8 one may take several bytes)
            self.typed += self.decoder.decode(bytes([byte]))
            self.show(self.typed, "")
