"""A learner's answers are kept by exercise id (corecoder_course/answers.py), so that a later
chapter, in another kernel, can take them up: an answer that passes its check is written as a
module of its own (its imports, the helpers and constants it uses, itself), and `mine` loads it
again; a failing answer is not kept, and a folder that cannot be written costs the check
nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import nbformat
import pytest
from nbclient import NotebookClient

from corecoder_course import check
from corecoder_course.answers import keep, mine

LEARNER = textwrap.dedent('''
    from corecoder.messages import is_state_note
    STEP = 1


    def _back(index):
        return index - STEP


    def safe_cut(messages, index):
        index = max(0, min(index, len(messages)))
        while 0 < index < len(messages) and (messages[index]["role"] == "tool"
                                             or is_state_note(messages[index])):
            index = _back(index)
        return index


    class Last:
        def __init__(self, n):
            self.n = n

        def prepare(self, messages, overflow=False):
            return messages[-self.n:]
''')


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.setenv("CORECODER_COURSE_ANSWERS", str(tmp_path / "kept"))
    (tmp_path / "learner.py").write_text(LEARNER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    import learner

    return importlib.reload(learner), tmp_path / "kept"


def test_a_passing_answer_is_kept_with_what_it_uses_and_loads_in_another_process(kept, capsys):
    learner, folder = kept
    check("ch04.safe_cut", learner.safe_cut)
    text = (folder / "ch04.safe_cut.py").read_text(encoding="utf-8")
    assert "from corecoder.messages import is_state_note" in text  # the engine's: imported
    assert "def _back(index)" in text and "STEP = 1" in text  # the learner's: copied
    assert "import learner" not in text and "from learner" not in text
    program = ("from corecoder_course.answers import mine\nfrom corecoder_course import check\n"
               "check('ch04.safe_cut', mine('ch04.safe_cut'))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          cwd=folder.parent, check=True,
                          env={"CORECODER_COURSE_ANSWERS": str(folder), "PATH": ""})
    assert done.stdout == "✓ ch04.safe_cut passed\n"


def test_a_class_is_kept_too(kept):
    learner, folder = kept
    keep("test.last", learner.Last)
    assert mine("test.last")(2).prepare([1, 2, 3]) == [2, 3]


def test_a_failing_answer_is_not_kept_and_a_missing_one_says_where_answers_go(kept, capsys):
    _, folder = kept
    check("ch04.safe_cut", lambda messages, index: 0)
    assert not (folder / "ch04.safe_cut.py").exists()
    with pytest.raises(LookupError, match="no answer kept for ch04.safe_cut"):
        mine("ch04.safe_cut")


def test_a_folder_that_cannot_be_written_costs_the_check_nothing(kept, capsys, monkeypatch):
    learner, folder = kept
    folder.parent.joinpath("blocked").write_text("a file, not a folder", encoding="utf-8")
    monkeypatch.setenv("CORECODER_COURSE_ANSWERS", str(folder.parent / "blocked" / "kept"))
    check("ch04.safe_cut", learner.safe_cut)
    assert capsys.readouterr().out == "✓ ch04.safe_cut passed\n"


def test_an_answer_written_in_a_notebook_cell_is_kept(tmp_path, monkeypatch):
    """A function, a class (whose module, __main__, has no file for inspect to read) and a
    function that uses a compiled pattern of the learner's, each kept from a kernel."""
    monkeypatch.setenv("CORECODER_COURSE_ANSWERS", str(tmp_path / "kept"))
    named = textwrap.dedent('''
        import re
        from corecoder_course.answers import keep
        ID = re.compile(r"[a-z]{1,3}", re.IGNORECASE)


        def named(text):
            return bool(ID.fullmatch(text))


        keep("test.last", Last)
        keep("test.named", named)
    ''')
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        LEARNER + "\nfrom corecoder_course import check\ncheck('ch04.safe_cut', safe_cut)"),
        nbformat.v4.new_code_cell(named)])
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert notebook.cells[0].outputs[0]["text"] == "✓ ch04.safe_cut passed\n"
    assert mine("ch04.safe_cut")([{"role": "user", "content": "hi"}], 5) == 1
    assert mine("test.last")(2).prepare([1, 2, 3]) == [2, 3]
    assert [mine("test.named")(text) for text in ("AbC", "abcd", "")] == [True, False, False]


def test_the_chapters_folded_solution_run_as_it_stands_is_not_kept_as_the_learners(kept, capsys):
    _, folder = kept
    solution = textwrap.dedent('''
        def safe_cut(messages, index):
            ### BEGIN SOLUTION
            from corecoder.context import turn_start
            return turn_start(messages, index)
            ### END SOLUTION
    ''')
    (folder.parent / "solution.py").write_text(solution, encoding="utf-8")
    import solution as module

    check("ch04.safe_cut", module.safe_cut)
    assert capsys.readouterr().out == "✓ ch04.safe_cut passed\n"
    assert not (folder / "ch04.safe_cut.py").exists()


def test_the_stub_is_no_try_so_the_first_wrong_answer_gets_the_rule_alone(capsys, monkeypatch):
    from corecoder_course import checks

    monkeypatch.setattr(checks, "FAILED", checks.collections.Counter())

    def stub(messages, index):
        raise NotImplementedError

    check("ch04.safe_cut", stub)
    check("ch04.safe_cut", lambda messages, index: 0)
    first_wrong = capsys.readouterr().out.split("✗ ch04.safe_cut: not yet.")[1]
    assert "the code's shape" not in first_wrong
    check("ch04.safe_cut", lambda messages, index: 0)
    assert "the code's shape" in capsys.readouterr().out
