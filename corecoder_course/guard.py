"""Consent and undo as a learner tries them: a user who answers from a script, buttons that
answer again, and the stack of checkpoints with its Undo button.

`Asker(answers)` is the user whom consent asks: it answers from `answers` in turn ("once",
"always" or "deny"; "deny" once they run out) and keeps each question with the answer it gave.

`consent_buttons(scenario, answers)` runs `scenario(asker)`, a fresh run of an agent whose
`Consent` asks `asker`, and shows each question with three buttons, the scripted answer
pressed. Press another and the scenario runs again from the start with that answer (the
questions after it get the script's answers that remain): an "always" makes the next question
about that tool vanish, a "no" leaves the file as it was.
Its text twin: each question, the answer the script gave, and what the run came to.

`undo_stack(checkpoints)`: the checkpoints kept for the project, newest first, and an Undo
button that calls `checkpoints.undo()` and shows what it said. Its text twin: the stack.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path

from .viewer import display_twin
from .words import language, say, speaking

ANSWERS = ("once", "always", "deny")


class Asker:
    """The user, answering from a script: each question kept with the answer it got."""

    def __init__(self, answers=()):
        self.answers = list(answers)
        self.questions: list[tuple[str, dict, str]] = []  # (tool, args, answer)

    def __call__(self, tool, args: dict) -> str:
        n = len(self.questions)
        answer = self.answers[n] if n < len(self.answers) else "deny"
        self.questions.append((tool.name, dict(args), answer))
        return answer


def _question(tool: str, args: dict) -> str:
    first = next(iter(args.values()), "")
    shown = first if isinstance(first, str) else json.dumps(first, ensure_ascii=False)
    return say(f"allow {tool}? {shown}", f"允许 {tool} 吗？{shown}")


def _said(answer: str) -> str:
    return {"once": say("once", "这一次"), "always": say("always", "一直允许"),
            "deny": say("no", "不行")}[answer]


def consent_text(asker: Asker, outcome: list[str]) -> str:
    lines = [f"{_question(tool, args)} → {_said(answer)}" for tool, args, answer in
             asker.questions] or [say("nobody was asked", "没有问用户")]
    return "\n".join([*lines, *outcome])


def consent_widget(scenario: Callable, answers: list[str]):
    """Each question and its three buttons; a press runs the scenario again with that answer."""
    import ipywidgets as w  # only here: the rest of the course helpers work without it

    lang, box = language(), w.VBox()

    def draw(answers: list[str]) -> None:
        with speaking(lang):
            asker = Asker(answers)
            outcome = scenario(asker)
            rows = []
            for k, (tool, args, answer) in enumerate(asker.questions):
                buttons = w.ToggleButtons(options=[(_said(a), a) for a in ANSWERS], value=answer)
                buttons.observe(lambda change, k=k: draw(  # the script goes on after it
                    [*(a for _, _, a in asker.questions[:k]), change["new"], *answers[k + 1:]]),
                    names="value")
                rows.append(w.HBox([w.HTML(html.escape(_question(tool, args))), buttons]))
            told = w.HTML("<pre>" + html.escape("\n".join(outcome)) + "</pre>")
            box.children = [*(rows or [w.HTML(say("nobody was asked", "没有问用户"))]), told]

    draw(list(answers))
    return box


def consent_buttons(scenario: Callable, answers) -> None:
    """Run `scenario(asker)` with the scripted `answers`; show the questions with their buttons
    (under Jupyter with ipywidgets) and the text twin, or print the twin."""
    asker = Asker(answers)
    outcome = scenario(asker)
    display_twin(lambda: consent_widget(scenario, list(answers)), consent_text(asker, outcome))


def _stack(checkpoints) -> list[str]:
    """The checkpoints kept for the project, newest first, one line each."""
    lines = []
    for file in sorted(checkpoints.dir.glob("*.json"), reverse=True):
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
            path = Path(record["path"]).relative_to(checkpoints.root).as_posix()
            how = say("it existed", "原本就有") if record["existed"] else say(
                "it did not exist", "原本没有")
            lines.append(f"{file.stem.lstrip('0')}  {record['tool']}  {path}  "
                         + say(f"({how})", f"（{how}）"))
        except (OSError, ValueError, KeyError, TypeError):
            lines.append(f"{file.stem.lstrip('0')}  " + say("(damaged)", "（已损坏）"))
    return lines


def stack_text(checkpoints) -> str:
    lines = _stack(checkpoints)
    return "\n".join([say("the undo stack, newest first:", "撤销栈，最新的在最上面："),
                      *(f"  {line}" for line in lines)] if lines else
                     [say("the undo stack is empty", "撤销栈是空的")])


def _listed(checkpoints) -> str:
    """The stack as the widget lists it: a line a checkpoint, newest first."""
    lines = _stack(checkpoints) or [say("(empty)", "（空）")]
    return "<pre>" + html.escape("\n".join(lines)) + "</pre>"


def stack_widget(checkpoints):
    """The stack, and an Undo button that undoes the newest change and says what it did."""
    import ipywidgets as w

    lang = language()
    with speaking(lang):
        shown = w.HTML(_listed(checkpoints))
        said = w.HTML("")
        button = w.Button(description=say("Undo", "撤销"), icon="undo")

    def undo(_button) -> None:
        with speaking(lang):
            said.value = "<b>" + html.escape(checkpoints.undo()) + "</b>"
            shown.value = _listed(checkpoints)

    button.on_click(undo)
    return w.VBox([shown, w.HBox([button, said])])


def undo_stack(checkpoints) -> None:
    """Show the undo stack with its button (under Jupyter with ipywidgets) and its text twin, or
    print the twin."""
    display_twin(lambda: stack_widget(checkpoints), stack_text(checkpoints))
