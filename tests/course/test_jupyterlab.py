"""Chapter 00 as a learner meets it: JupyterLab in a real browser, run from top to bottom, in both languages.

JupyterLab is started the way the README's first command starts it (the repository as its root, the tour
opened), on a copy of the chapters so that nothing it saves reaches the repository. The page is read as it
is drawn: every cell ran without an error, the step-through widget moves and shows the round it is on,
its text twin is not printed a second time under it, the exercises are unsolved with their solutions
folded away, and the helpers speak the notebook's language.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
WORDS = {  # what the widget and the helpers say, in each language
    "00-tour.ipynb": {"next": "next ▶", "round": "Round {n}", "unsolved": "not implemented yet"},
    "00-tour.zh.ipynb": {"next": "下一轮 ▶", "round": "第 {n} 轮", "unsolved": "还没有实现"},
}


# As the README's command starts it: a chapter is saved as it is committed (corecoder_course/saving.py)
SAVE_HOOK = "--ContentsManager.pre_save_hook=corecoder_course.saving.as_committed"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a copy of the repository's chapters; its URL and token."""
    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".work"))
    shutil.copytree(ROOT / "essays", root / "essays")
    port, token = free_port(), secrets.token_hex(8)
    settings = root / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)  # no "notified of Jupyter news?" toast over the page
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    # Every cell drawn, not only those near the screen: on a loaded machine a cell scrolled to could stay
    # blank past any wait (seen: the explorer's cell, empty, 30 s after a scroll to it). What a learner
    # reads is the same either way; the widgets are what these tests look at.
    tracker = root / "lab-settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", SAVE_HOOK,
         "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=True"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(root / "lab-settings")})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
            break
        except OSError:
            assert time.monotonic() < deadline and server.poll() is None, "JupyterLab did not start"
            time.sleep(0.3)
    yield url, token, root
    server.terminate()
    server.wait(timeout=20)


def listing(url: str, token: str) -> set[str]:
    with urllib.request.urlopen(f"{url}/api/contents?token={token}") as reply:
        return {item["name"] for item in json.load(reply)["content"]}


def test_the_file_browser_reaches_the_chapters_and_the_essays(lab):
    url, token, _ = lab
    assert {"notebooks", "essays"} <= listing(url, token)


def run_all(browser, url: str, token: str, name: str) -> None:
    """Open a chapter as the README's command does, clear its stored outputs, run every cell, and see
    that none failed."""
    browser.open(f"{url}/lab/tree/notebooks/{name}?reset&token={token}",
                 f"!!(document.querySelector('{PANEL} .jp-Notebook') && window.jupyterapp)", 90)
    browser.click(f"document.querySelector('{PANEL} .jp-Cell')")  # the notebook is the current one
    kernel = "window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status"
    browser.wait(f"{kernel} === 'idle'", 90)
    prompts = f"[...document.querySelectorAll('{PANEL} .jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent)"
    browser.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs') && 1")
    browser.wait(f"{prompts}.every(p => !/\\d/.test(p))", 10)  # the stored run is gone
    # Done when the command's promise resolves, after the last cell's reply: the kernel is idle for a moment
    # between two cells too, so an idle kernel alone says nothing.
    browser.evaluate("window.ranAll = null; window.jupyterapp.commands.execute('notebook:run-all-cells')"
                     ".then(ran => { window.ranAll = ran; }, error => { window.ranAll = String(error); }) && 1")
    browser.wait(f"window.ranAll !== null && {kernel} === 'idle'", 180)
    assert browser.evaluate("window.ranAll") is True
    browser.wait(f"{prompts}.length > 0 && {prompts}.every(p => /\\[\\d+\\]/.test(p))", 20)
    errors = browser.evaluate(f"[...document.querySelectorAll('{PANEL} "
                              "[data-mime-type=\"application/vnd.jupyter.error\"]')].map(e => e.innerText)")
    assert errors == []


def click_until(browser, button: str, shown: str) -> None:
    """Click a widget's button and wait for what the click shows; click once more if the first click came
    before the widget's view was listening."""
    browser.click(button)
    try:
        browser.wait(shown, 8)
    except AssertionError:
        browser.click(button)
        browser.wait(shown, 10)


def save(browser) -> None:
    """Save the notebook (in the copy), so that leaving the page asks nothing."""
    browser.evaluate("window.jupyterapp.commands.execute('docmanager:save') && 1")
    browser.wait("window.jupyterapp.shell.currentWidget.context.model.dirty === false", 20)


def exercises_unsolved_and_folded(browser, unsolved: str, count: int) -> None:
    """Each exercise's check says it is not implemented yet, and each solution is folded away. Read from the
    notebook's cells, not the page: by default JupyterLab draws only the cells near the screen."""
    cells = "window.jupyterapp.shell.currentWidget.content.widgets"
    told = browser.evaluate(f"{cells}.map(c => c.model.outputs ? JSON.stringify(c.model.outputs.toJSON()) : '')"
                            ".join('\\n')")
    assert told.count(unsolved) == count
    folded = browser.evaluate(f"{cells}.filter(c => c.inputHidden).length")
    assert folded == count, "each solution is folded away (one click shows it)"


@pytest.mark.parametrize("name", list(WORDS))
def test_a_learner_runs_the_tour_and_steps_through_its_rounds(browser, lab, name):
    url, token, root = lab
    words = WORDS[name]
    run_all(browser, url, token, name)

    # the step-through viewer: a widget, and under it no second copy of its text twin
    viewer = f"document.querySelector('{PANEL} .jupyter-widgets.widget-vbox')"
    browser.wait(f"!!{viewer}", 30)
    browser.evaluate(f"{viewer}.scrollIntoView({{block: 'start'}}) || 1")  # on screen, as a learner sees it
    page = f"{viewer}.querySelector('.widget-html-content')"
    assert words["round"].format(n=1) in browser.wait(f"{page} && {page}.innerText")
    output_text = browser.evaluate(f"{viewer}.closest('.jp-OutputArea').innerText")
    assert "── " not in output_text, "the text twin is printed again under the widget"
    button = (f"[...{viewer}.querySelectorAll('button')].find(b => b.innerText.trim() === "
              f"{json.dumps(words['next'])})")
    assert browser.evaluate(f"!!{button}"), f"no {words['next']!r} button"
    for n in (2, 3):
        click_until(browser, button, f"{page}.innerText.includes({json.dumps(words['round'].format(n=n))})")
    slider = f"{viewer}.querySelector('.widget-readout')"
    assert browser.evaluate(f"{slider}.innerText.trim()") == "3"

    # the exercises: unsolved, each check saying so, each solution folded away
    exercises_unsolved_and_folded(browser, words["unsolved"], 2)
    assert (root / "notebooks" / ".work" / "00-tour").is_dir()  # the run worked in the copy
    save(browser)


def on_screen(browser, which: str, twin: str) -> str:
    """The chapter's widget that `which` (a test of a widget `w`) picks, waited for and scrolled on screen as a
    learner sees it; its text twin (the words `twin`) must not be printed again under it."""
    widget = f"[...document.querySelectorAll('{PANEL} .jupyter-widgets.widget-vbox')].find(w => {which})"
    try:
        browser.wait(f"!!{widget}", 30)
    except AssertionError:  # say what the page holds instead: the views drawn, the cells holding one
        views = browser.evaluate(f"document.querySelectorAll('{PANEL} .jupyter-widgets').length")
        held = browser.evaluate("window.jupyterapp.shell.currentWidget.content.widgets.filter(c => c.model.outputs "
                                "&& JSON.stringify(c.model.outputs.toJSON()).includes('widget-view+json')).length")
        raise AssertionError(f"no widget where {which}: {views} widget views drawn, {held} cells hold one") from None
    browser.evaluate(f"{widget}.scrollIntoView({{block: 'start'}}) || 1")
    output_text = browser.evaluate(f"{widget}.closest('.jp-OutputArea').innerText")
    assert twin not in output_text, "the text twin is printed again under the widget"
    return widget


# Chapters 2-5 run in English here: each widget's Chinese is its own function's, proven without a
# browser (tests/course/test_widgets_speak.py); the tour runs in both languages, so a Chinese notebook's
# widgets, verdicts and folded solutions are seen in a real JupyterLab too.
EXPLORER = {  # what the edit explorer says
    "02-tools.ipynb": {"edit": "edit", "refused": "refused", "matched": "matched by", "exact": "the exact text",
                       "twin": "each attempt on a fresh copy", "unsolved": "not implemented yet"},
}


@pytest.mark.parametrize("name", list(EXPLORER))
def test_a_learner_tries_edits_in_the_explorer_of_chapter_two(browser, lab, name):
    url, token, root = lab
    words = EXPLORER[name]
    run_all(browser, url, token, name)
    explorer = on_screen(browser, "w.querySelector('select') && w.querySelector('textarea')", words["twin"])
    verdict = f"[...{explorer}.querySelectorAll('.widget-html-content')].at(-1).innerText"
    assert words["exact"] in browser.wait(verdict), "the first attempt is shown, matched exactly"

    # pick the ambiguous attempt: its old_string is loaded, and the edit is refused with its lines
    select = f"{explorer}.querySelector('select')"
    browser.evaluate(f"(() => {{ const s = {select}; s.selectedIndex = s.options.length - 1; "
                     "s.dispatchEvent(new Event('change', {bubbles: true})); return 1; })()")
    refused = f"{verdict}.includes({json.dumps(words['refused'])}) && {verdict}.includes('lines 2, 4, 5')"
    browser.wait(refused, 10)
    old = f"{explorer}.querySelectorAll('textarea')[0]"
    assert browser.evaluate(f"{old}.value") == "result"

    # type edits of one's own (two lines, the trailing spaces of the first left out) and press edit
    for i, text in enumerate(["    result = 0\\n    for item in items:", "    total = 0\\n    for item in items:"]):
        browser.evaluate(f"(() => {{ const t = {explorer}.querySelectorAll('textarea')[{i}]; t.value = '{text}'; "
                         "t.dispatchEvent(new Event('input', {bubbles: true})); return 1; })()")
    button = (f"[...{explorer}.querySelectorAll('button')].find(b => b.innerText.trim() === "
              f"{json.dumps(words['edit'])})")
    edited = (f"{verdict}.includes({json.dumps(words['matched'])}) && {verdict}.includes('+    total = 0') "
              "&& /trailing whitespace/.test(" + verdict + ")")
    click_until(browser, button, edited)
    exercises_unsolved_and_folded(browser, words["unsolved"], 3)
    save(browser)


def click_the_end_of_the_track(browser, widget: str, shown: str, end: str = "right") -> None:
    """Click a widget's slider at one end of its track, with the mouse, as a learner would, and wait for what
    the click shows; click once more if the first click came before the slider's view was listening (on a
    loaded machine it can, as with buttons: click_until)."""
    track = f"{widget}.querySelector('.noUi-target')"
    for attempt in range(2):
        browser.evaluate(f"{track}.scrollIntoView({{block: 'center'}}) || 1")
        time.sleep(0.3)  # JupyterLab draws what comes into view: let it settle
        x, y = browser.evaluate(f"(() => {{ const r = {track}.getBoundingClientRect(); "
                                f"return [{'r.right - 1' if end == 'right' else 'r.x + 1'}, r.y + r.height / 2]; }})()")
        browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)  # a pointer arrives first
        for kind in ("mousePressed", "mouseReleased"):
            browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        try:
            browser.wait(shown, 6 if attempt == 0 else 10)
            return
        except AssertionError:
            if attempt == 1:
                raise


SCRUBBER = {  # what the stream scrubber says (its twin's heading: not under the widget)
    "03-model.ipynb": {"chunk": "chunk", "twin": "what the chunk carries", "unsolved": "not implemented yet"},
}


@pytest.mark.parametrize("name", list(SCRUBBER))
def test_a_learner_scrubs_through_a_stream_in_chapter_three(browser, lab, name):
    url, token, root = lab
    words = SCRUBBER[name]
    run_all(browser, url, token, name)
    scrubber = on_screen(browser, "w.querySelector('.widget-slider') && !w.querySelector('select')", words["twin"])
    page = f"{scrubber}.querySelector('.widget-html-content').innerText"
    first = browser.wait(page)
    assert f"{words['chunk']} 1" in first and "read_file()" in first and "grep" not in first
    # click the slider's track at its right end, as a learner would: the last chunk, both calls whole
    last = 11
    both_whole = f"{page}.includes('{words['chunk']} {last}') && {page}.includes('grep(')"
    click_the_end_of_the_track(browser, scrubber, both_whole)
    assert '"include": "*.py"}' in browser.evaluate(page)
    exercises_unsolved_and_folded(browser, words["unsolved"], 3)
    save(browser)


GAUGE = {  # what the context gauge says (its twin's heading: not under the widget)
    "04-context.ipynb": {"round": "round {n} sent", "twin": "the tiers start at", "unsolved": "not implemented yet"},
}


@pytest.mark.parametrize("name", list(GAUGE))
def test_a_learner_opens_a_round_of_the_context_gauge_in_chapter_four(browser, lab, name):
    url, token, root = lab
    words = GAUGE[name]
    run_all(browser, url, token, name)
    gauge = on_screen(browser, "w.querySelector('.widget-slider') && w.textContent.includes('r12')", words["twin"])
    page = f"{gauge}.querySelector('.widget-html-content').innerText"
    first = browser.wait(page)
    assert words["round"].format(n=1) in first and "reset (" in first, "round 1 open, every bar drawn"
    # the last round: after the reset, the summary and the latest turn, three messages
    click_the_end_of_the_track(browser, gauge, f"{page}.includes({json.dumps(words['round'].format(n=12))})")
    assert "[Summary of the earlier conversation" in browser.evaluate(page)
    exercises_unsolved_and_folded(browser, words["unsolved"], 3)
    save(browser)


TIMELINE = {  # what the call timeline says (its twin's note: not under the widget)
    "05-parallel.ipynb": {"step": "step", "twin": "may come in another order on another run",
                          "unsolved": "not implemented yet"},
}


@pytest.mark.parametrize("name", list(TIMELINE))
def test_a_learner_plays_the_call_timeline_of_chapter_five(browser, lab, name):
    url, token, root = lab
    words = TIMELINE[name]
    run_all(browser, url, token, name)
    lanes = "w.querySelector('.widget-slider') && w.textContent.includes('call_1_2')"  # at every step
    timeline = on_screen(browser, lanes, words["twin"])
    page = f"{timeline}.querySelector('.widget-html-content').innerText"
    first = browser.wait(page)
    assert words["step"] in first and "wakes" in first and "finished: ok" in first, "every step shown"
    # back to the start of the track: no step played yet
    nothing_played = f"!{page}.includes('wakes') && !{page}.includes('finished')"
    click_the_end_of_the_track(browser, timeline, nothing_played, end="left")
    exercises_unsolved_and_folded(browser, words["unsolved"], 3)
    save(browser)


TREE = {  # what the delegation tree says (its twin's branches: not under the widget)
    "06-delegation.ipynb": {"parent": "parent", "twin": "└─", "unsolved": "not implemented yet"},
}


@pytest.mark.parametrize("name", list(TREE))
def test_a_learner_opens_a_worker_in_the_delegation_tree_of_chapter_six(browser, lab, name):
    url, token, root = lab
    words = TREE[name]
    run_all(browser, url, token, name)
    tree = on_screen(browser, "w.querySelector('.jupyter-widget-Accordion, .widget-accordion') "
                              "&& w.textContent.includes('p3')", words["twin"])
    assert words["parent"] in browser.evaluate(f"{tree}.innerText")
    # open the second worker's fold, as a learner would: its calls are shown, and only its own
    header = (f"[...{tree}.querySelectorAll('.jupyter-widget-Collapse-header, .p-Collapse-header')]"
              ".find(h => h.innerText.includes('p2'))")
    opened = (f"[...{tree}.querySelectorAll('.jupyter-widget-Collapse-open, .p-Collapse-open')]"
              ".some(c => c.innerText.includes('read_file part2.py: ok') "
              "&& !c.innerText.includes('part1.py'))")
    click_until(browser, header, opened)
    exercises_unsolved_and_folded(browser, words["unsolved"], 3)
    save(browser)


WIRE = {  # what the wire's view says (its twin's first line: not under the widget)
    "07-hooks-mcp.ipynb": {"twin": "on the wire:", "unsolved": "not implemented yet"},
}


@pytest.mark.parametrize("name", list(WIRE))
def test_a_learner_unfolds_a_message_on_the_wire_in_chapter_seven(browser, lab, name):
    url, token, root = lab
    words = WIRE[name]
    run_all(browser, url, token, name)
    wire = on_screen(browser, "w.querySelector('details') && w.textContent.includes('tools/call')", words["twin"])
    # a line unfolds to its whole message, as a learner opens it: the answer to the call, as the server sent it
    summary = (f"[...{wire}.querySelectorAll('summary')]"
               ".find(s => s.textContent.includes('\"id\": 3, \"result\"'))")
    opened = f"{summary}.parentElement.open && {summary}.parentElement.innerText.includes('\"text\": \"5\"')"
    click_until(browser, summary, opened)
    exercises_unsolved_and_folded(browser, words["unsolved"], 4)
    save(browser)


GUARD = {  # what consent's buttons and the undo stack say (their twins' words: not under the widgets)
    "08-guarding.ipynb": {"asked": "allow write_file?", "always": "always", "twin": " → ",
                          "stack": "the undo stack, newest first", "undone": "deleted new.md",
                          "unsolved": "not implemented yet"},
}


@pytest.mark.parametrize("name", list(GUARD))
def test_a_learner_answers_again_and_undoes_a_change_in_chapter_eight(browser, lab, name):
    url, token, root = lab
    words = GUARD[name]
    run_all(browser, url, token, name)
    consent = on_screen(browser, "w.querySelector('.widget-toggle-buttons') && w.textContent.includes('echo hello')",
                        words["twin"])
    asked = f"{consent}.innerText.split({json.dumps(words['asked'])}).length - 1"
    assert browser.evaluate(asked) == 2, "write_file is asked about twice: the script said once, then once again"
    # "always" for the first question: the run starts again, and write_file is never asked about again
    always = (f"[...{consent}.querySelector('.widget-toggle-buttons').querySelectorAll('button')]"
              f".find(b => b.innerText.trim() === {json.dumps(words['always'])})")
    click_until(browser, always, f"{asked} === 1")
    stack = on_screen(browser, "w.querySelector('button') && w.textContent.includes('new.md') "
                               "&& !w.querySelector('.widget-toggle-buttons')", words["stack"])
    listed = f"{stack}.innerText.split('\\n').filter(l => /^\\d+  /.test(l.trim())).length"  # a line a checkpoint
    assert browser.evaluate(listed) == 3
    undo = f"{stack}.querySelector('button')"
    click_until(browser, undo, f"{stack}.innerText.includes({json.dumps(words['undone'])})")
    assert browser.evaluate(listed) == 2
    exercises_unsolved_and_folded(browser, words["unsolved"], 3)
    save(browser)


LOG = {  # what the session log's rows and its opened line say
    "09-sessions-cli.ipynb": {"call": "calls read_file", "torn": "torn by a crash", "hint": "press a line",
                              "twin": "line  kind", "unsolved": "not implemented yet"},
}


@pytest.mark.parametrize("name", list(LOG))
def test_a_learner_opens_a_line_of_the_session_log_in_chapter_nine(browser, lab, name):
    url, token, root = lab
    words = LOG[name]
    run_all(browser, url, token, name)
    # the first log: the session of section 1 (its rows stay; the hint under them gives way to a line)
    log = on_screen(browser, f"w.textContent.includes({json.dumps(words['call'])}) "
                             f"&& !w.textContent.includes({json.dumps(words['torn'])})", words["twin"])
    assert words["hint"] in browser.evaluate(f"{log}.innerText")
    row = f"[...{log}.querySelectorAll('button')].find(b => b.innerText.includes({json.dumps(words['call'])}))"
    click_until(browser, row, f"{log}.querySelector('pre') && {log}.querySelector('pre').innerText"
                              ".includes('\"tool_calls\"')")
    damaged = on_screen(browser, f"w.textContent.includes({json.dumps(words['torn'])})", words["twin"])
    torn = f"[...{damaged}.querySelectorAll('button')].find(b => b.innerText.includes({json.dumps(words['torn'])}))"
    click_until(browser, torn, f"{damaged}.querySelector('pre') && {damaged}.querySelector('pre').innerText"
                               ".includes('and th')")
    exercises_unsolved_and_folded(browser, words["unsolved"], 3)
    save(browser)


def test_the_readme_starts_jupyterlab_with_the_hook_that_saves_a_chapter_as_committed():
    for readme in ("README.md", "README.zh.md"):
        command = next(line for line in (ROOT / readme).read_text(encoding="utf-8").splitlines()
                       if "jupyter lab" in line)
        assert SAVE_HOOK in command.split(), readme


@pytest.mark.parametrize("name", ["03-model.ipynb", "03-model.zh.ipynb"])
def test_opening_a_chapter_and_saving_it_leaves_the_file_as_committed(browser, lab, name):
    """JupyterLab writes the kernel's Python version into a notebook it opens, and its autosave
    would write that to disk: the next git pull would be refused. Saved through the README's
    hook, the file stays byte for byte as committed."""
    url, token, root = lab
    opened = f"opened-{name}"  # a copy no other test has run or saved
    shutil.copyfile(ROOT / "notebooks" / name, root / "notebooks" / opened)
    browser.open(f"{url}/lab/tree/notebooks/{opened}?reset&token={token}",
                 f"!!(document.querySelector('{PANEL} .jp-Notebook') && window.jupyterapp)", 90)
    browser.click(f"document.querySelector('{PANEL} .jp-Cell')")  # the notebook is the current one
    kernel = "window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status"
    browser.wait(f"{kernel} === 'idle'", 90)
    version = ("window.jupyterapp.shell.currentWidget.context.model.getMetadata('language_info')"
               "?.version")
    browser.wait(f"!!{version}", 30)  # the kernel's version is in the page's model: the save has it
    browser.evaluate("window.jupyterapp.commands.execute('docmanager:save') && 1")
    browser.wait("window.jupyterapp.shell.currentWidget.context.model.dirty === false", 20)
    saved = (root / "notebooks" / opened).read_bytes()
    assert saved == (ROOT / "notebooks" / name).read_bytes()
