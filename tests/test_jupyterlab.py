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

ROOT = Path(__file__).resolve().parents[1]
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
WORDS = {  # what the widget and the helpers say, in each language
    "00-tour.ipynb": {"next": "next ▶", "round": "Round {n}", "unsolved": "not implemented yet"},
    "00-tour.zh.ipynb": {"next": "下一轮 ▶", "round": "第 {n} 轮", "unsolved": "还没有实现"},
}


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
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
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


@pytest.mark.parametrize("name", list(WORDS))
def test_a_learner_runs_the_tour_and_steps_through_its_rounds(browser, lab, name):
    url, token, root = lab
    words = WORDS[name]
    browser.open(f"{url}/lab/tree/notebooks/{name}?reset&token={token}",
                 f"!!(document.querySelector('{PANEL} .jp-Notebook') && window.jupyterapp)", 90)
    browser.click(f"document.querySelector('{PANEL} .jp-Cell')")  # the notebook is the current one
    kernel = "window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status"
    browser.wait(f"{kernel} === 'idle'", 90)
    prompts = f"[...document.querySelectorAll('{PANEL} .jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent)"
    browser.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs') && 1")
    browser.wait(f"{prompts}.every(p => !/\\d/.test(p))", 10)  # the stored run is gone
    browser.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells') && 1")
    browser.wait(f"{prompts}.length > 0 && {prompts}.every(p => /\\[\\d+\\]/.test(p)) && {kernel} === 'idle'", 180)
    errors = browser.evaluate(f"[...document.querySelectorAll('{PANEL} "
                              "[data-mime-type=\"application/vnd.jupyter.error\"]')].map(e => e.innerText)")
    assert errors == []

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
        shown = f"{page}.innerText.includes({json.dumps(words['round'].format(n=n))})"
        browser.click(button)
        try:
            browser.wait(shown, 8)
        except AssertionError:  # a click that came before the widget's view was listening: once more
            browser.click(button)
            browser.wait(shown, 10)
    slider = f"{viewer}.querySelector('.widget-readout')"
    assert browser.evaluate(f"{slider}.innerText.trim()") == "3"

    # the exercises: unsolved, each check saying so, each solution folded away
    told = browser.evaluate(f"[...document.querySelectorAll('{PANEL} .jp-OutputArea-output')]"
                            ".map(e => e.textContent).join('\\n')")
    assert told.count(words["unsolved"]) == 2
    folded = browser.evaluate(f"document.querySelectorAll('{PANEL} .jp-Cell .jp-InputPlaceholder').length")
    assert folded == 2, "each solution is folded away (one click shows it)"
    assert (root / "notebooks" / ".work" / "00-tour").is_dir()  # the run worked in the copy
    # saved (in the copy), so that leaving the page asks nothing
    browser.evaluate("window.jupyterapp.commands.execute('docmanager:save') && 1")
    browser.wait("window.jupyterapp.shell.currentWidget.context.model.dirty === false", 20)
