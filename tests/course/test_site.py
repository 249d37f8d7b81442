"""The course site (mkdocs.yml + docs/hooks/course_site.py), built once, exactly as the Pages workflow builds it.

`mkdocs build --strict` passing proves little on its own: notebook pages can come out as raw JSON, Chinese
headings with empty ids, the language switcher pointing at the wrong page. These tests read the built site,
and a real headless Chromium renders it (skipped only when chromium is absent outside CI).
"""

from __future__ import annotations

import functools
import html
import http.server
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
import types
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin

import pytest

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "zh")
SITE_URL = "https://example.org/corecoder/"  # the Pages workflow sets SITE_URL to its address


def _load_hook():
    spec = importlib.util.spec_from_file_location("course_site", ROOT / "docs" / "hooks" / "course_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = _load_hook()
CHAPTERS = [p.stem for p in hook.chapters(ROOT)]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": SITE_URL}
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    print(f"site built in {time.monotonic() - started:.1f} s")
    return out


def page(site: Path, lang: str, url: str) -> str:
    """The built HTML of a page, by its language-free URL ('01-loop/', '' for home)."""
    return (site / ("" if lang == "en" else lang) / url / "index.html").read_text(encoding="utf-8")


class Tags(HTMLParser):
    """Every start tag with its attributes: enough to read links and ids without a parser dependency."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def find(self, tag: str, **attrs) -> list[dict]:
        return [a for t, a in self.tags if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())]


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def notebook(name: str, lang: str) -> dict:
    suffix = ".ipynb" if lang == "en" else f".{lang}.ipynb"
    return json.loads((ROOT / "notebooks" / f"{name}{suffix}").read_text(encoding="utf-8"))


def markdown_of(nb: dict) -> str:
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


# --- the include step, as a plain function -----------------------------------------------------------------

SAMPLE = '''"""A module to include from."""
import functools


def plain(x):
    return x


@functools.cache
def decorated():
    return 1


class Box:
    size = 1

    def open(self):
        """Open it."""
        return "```"  # a backtick run: the fence must outgrow it


def twice():
    pass


def twice():  # noqa
    pass
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SAMPLE, encoding="utf-8")
    return tmp_path


def test_include_a_function_by_ast(repo):
    out = hook.expand_includes("Before.\n\n<!-- include: pkg/mod.py::plain -->\n\nAfter.\n", repo)
    assert out == ('Before.\n\n```python title="pkg/mod.py::plain" linenums="5"\n'
                   "def plain(x):\n    return x\n```\n\nAfter.\n")


def test_include_keeps_decorators_dedents_methods_and_outgrows_backticks(repo):
    out = hook.expand_includes("<!-- include: pkg/mod.py::decorated -->", repo)
    assert out.splitlines()[:2] == ['```python title="pkg/mod.py::decorated" linenums="9"', "@functools.cache"]
    out = hook.expand_includes("<!-- include: pkg/mod.py::Box.open -->", repo)
    assert out.splitlines()[0] == '````python title="pkg/mod.py::Box.open" linenums="17"'
    assert out.splitlines()[1] == "def open(self):"  # dedented out of the class
    assert out.endswith('return "```"  # a backtick run: the fence must outgrow it\n````')


def test_include_a_whole_file_and_keep_the_indent(repo):
    out = hook.expand_includes("<!-- include: pkg/mod.py -->", repo)
    assert out == f'````python title="pkg/mod.py" linenums="1"\n{SAMPLE.rstrip()}\n````'  # it holds a ```
    out = hook.expand_includes("1. A list item:\n\n    <!--include:pkg/mod.py::plain-->\n", repo)
    assert "\n    ```python" in out and "\n        return x\n    ```\n" in out


def test_text_that_only_mentions_an_include_is_left_alone(repo):
    text = "Write `<!-- include: pkg/mod.py::plain -->` on a line of its own.\n"
    assert hook.expand_includes(text, repo) == text


@pytest.mark.parametrize("line, why", [
    ("<!-- include: pkg/nope.py -->", "no such file"),
    ("<!-- include: ../outside.py -->", "no such file"),
    ("<!-- include: pkg/mod.py::missing -->", "no definition named 'missing'"),
    ("<!-- include: pkg/mod.py::Box.close -->", "no definition named 'close'"),
    ("<!-- include: pkg/mod.py::Box.size -->", "no definition named 'size'"),
    ("<!-- include: pkg/mod.py::twice -->", "more than one definition named 'twice'"),
])
def test_an_include_that_does_not_resolve_raises(repo, line, why):
    with pytest.raises(hook.IncludeError, match=re.escape(why)):
        hook.expand_includes(line, repo)


def test_an_include_that_does_not_resolve_fails_the_build(repo):
    from mkdocs.exceptions import PluginError

    config = types.SimpleNamespace(config_file_path=str(repo / "mkdocs.yml"), theme={"language": "en"})
    page_ = types.SimpleNamespace(file=types.SimpleNamespace(src_uri="essays/01-x.md"))
    with pytest.raises(PluginError, match="essays/01-x.md: include failed"):
        hook.on_page_markdown("<!-- include: pkg/mod.py::missing -->", page_, config, None)


# --- the built site ----------------------------------------------------------------------------------------


def test_the_site_has_the_chapters():
    assert CHAPTERS, "no notebooks/NN-*.ipynb found: the site would have no chapters"
    for name in CHAPTERS:
        assert (ROOT / "notebooks" / f"{name}.zh.ipynb").exists(), f"{name} has no Chinese twin"


@pytest.mark.parametrize("lang", LANGS)
def test_every_notebook_page_is_rendered_as_a_notebook(site, lang):
    for name in CHAPTERS:
        built = page(site, lang, f"{name}/")
        assert 'class="jupyter-wrapper"' in built, f"{lang} {name}: not rendered by mkdocs-jupyter"
        assert '"cell_type"' not in built and '"nbformat"' not in built, f"{lang} {name}: raw notebook JSON"
        title = re.search(r"^# +(.+)$", markdown_of(notebook(name, lang)), re.M)[1]
        assert html.escape(title, quote=False) in built or title in text_of(built)
        # The notebook CSS is served once, as a file, rather than inlined into every page.
        sheets = [a["href"] for a in Tags(built).find("link", rel="stylesheet") if "/notebook." in a["href"]]
        assert len(sheets) == 1 and "<style" not in built.split('class="jupyter-wrapper"')[1]
        assert (site / ("" if lang == "en" else lang) / name / sheets[0]).resolve().is_file()


@pytest.mark.parametrize("url", [f"{name}/" for name in CHAPTERS] + ["", "corecoder/agent/", "glossary/"])
def test_the_language_switcher_goes_to_the_same_page(site, url):
    for lang in LANGS:
        here = f"https://example.org/site/{'' if lang == 'en' else lang + '/'}{url}"
        links = {a["hreflang"]: urljoin(here, a["href"]) for a in Tags(page(site, lang, url)).find("a")
                 if "md-select__link" in a.get("class", "")}
        assert links == {"en": f"https://example.org/site/{url}", "zh": f"https://example.org/site/zh/{url}"}


def test_pages_declare_their_language(site):
    assert '<html lang="en"' in page(site, "en", "") and '<html lang="zh"' in page(site, "zh", "")
    assert "搜索" in page(site, "zh", "")  # the theme's own strings are Chinese too


def search(site: Path, lang: str, query: str) -> set[str]:
    """The pages whose index entries hold `query` as a token, split the way the site's search splits them."""
    index = json.loads((site / ("" if lang == "en" else lang) / "search" / "search_index.json").read_text("utf-8"))
    separator = re.compile(index["config"]["separator"])
    return {doc["location"].split("#")[0] for doc in index["docs"]
            if query.lower() in separator.split(text_of(doc["title"] + " " + doc["text"]).lower())}


@pytest.mark.parametrize("query", ["智能体", "工具调用", "原子写入", "工作区", "本地回环服务器", "服务商",
                                   "上下文窗口", "提示词缓存", "进程组", "执行器", "委派", "钩子", "会话日志",
                                   "消融实验"])
def test_a_chinese_query_finds_the_chinese_chapter(site, query):
    using = {f"{name}/" for name in CHAPTERS if query in markdown_of(notebook(name, "zh"))}
    assert using, f"no Chinese chapter uses {query}"
    found = search(site, "zh", query)
    assert using <= found, f"{query}: found {sorted(found)}"


# The terms each chapter teaches (in its headings, its words in bold, the glossary), by chapter, as
# docs/hooks/chapter_terms.txt lists them: a Chinese search for one lands on that chapter first,
# even where a later page names the term in a heading (订阅者 in chapter 9's exercise, 准入 in
# chapter 5's "所有调用先准入") or holds it in a longer word (工作区 in 工作区分叉).
TAUGHT = hook.chapter_terms(ROOT)


def test_every_chapter_has_its_terms_on_its_page():
    assert set(TAUGHT) == set(CHAPTERS)
    for name, terms in TAUGHT.items():
        text = markdown_of(notebook(name, "zh"))
        assert len(terms) >= 3 and all(term in text for term in terms), name
    every = [term for terms in TAUGHT.values() for term in terms]
    assert len(every) == len(set(every)), "a term is taught by one chapter"


def test_the_index_says_which_section_teaches_each_term(site):
    """Each term of a chapter is in the `teaches` of one entry of the Chinese index, the
    chapter's section that has it in its heading or in bold (or else uses it first), and that
    field weighs more than a heading; the English index has none."""
    index = search_index(site, "zh")
    assert index["config"]["fields"]["teaches"]["boost"] > index["config"]["fields"]["title"]["boost"]
    taught = {term: doc["location"] for doc in index["docs"] for term in doc.get("teaches", [])}
    assert taught == {term: taught[term] for terms in TAUGHT.values() for term in terms}
    for name, terms in TAUGHT.items():
        assert all(taught[term].split("#")[0] == f"{name}/" for term in terms), name
    assert taught["订阅者"] == "01-loop/#4-循环" and taught["准入"] == "02-tools/#3-准入路径的前半段"
    assert not [doc for doc in search_index(site, "en")["docs"] if "teaches" in doc]


def test_a_term_that_a_chapter_never_uses_fails_the_build():
    html = '<h1 id="t">标题</h1><p>正文</p><h2 id="a">接缝</h2><p>用到<strong>工作区</strong></p>'
    assert hook.teaching_sections(html, ["接缝", "工作区", "标题"]) == {"a": ["接缝", "工作区"],
                                                                   "": ["标题"]}
    with pytest.raises(hook.PluginError, match="订阅者"):
        hook.teaching_sections(html, ["订阅者"])


def plain(markup: str) -> str:
    """Text as a reader sees it: no tags, no U+200B (jieba's marks where it cut the Chinese)."""
    return text_of(markup).replace("\u200b", "")


def search_index(site: Path, lang: str) -> dict:
    path = site / ("" if lang == "en" else lang) / "search" / "search_index.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_jieba_never_cuts_a_term(site):
    """The terms of the user dictionary, of the glossary and of the chapters are one word of the
    index wherever a page uses them, so that a query, cut into the index's own words, finds each
    term as one word on every page."""
    text = text_of(" ".join(d["title"] + " " + d["text"] for d in search_index(site, "zh")["docs"]))
    dictionary = (ROOT / "docs" / "hooks" / "jieba_user_dict.txt").read_text(encoding="utf-8")
    terms = {line.split()[0] for line in dictionary.splitlines() if line.strip()}
    terms |= set(hook.glossary_terms(ROOT)) | {t for chapter in TAUGHT.values() for t in chapter}
    assert {"原子写入", "提示词缓存", "工作区分叉", "成本核算"} <= terms  # the glossary's, too
    cut = {}
    for term in sorted(terms):
        used = set(re.findall("\u200b?".join(map(re.escape, term)), text))  # cut or whole
        if used - {term}:
            cut[term] = sorted(used - {term})
    assert not cut, f"jieba cut these terms: {cut}"


def test_the_glossary_terms_are_read_from_its_chinese_column():
    terms = hook.glossary_terms(ROOT)
    assert {"智能体", "工作区分叉", "重试", "退避", "本地回环服务器", "原子写入"} <= set(terms)
    assert not {"中文", "fork", "说明", "回应（工具调用）"} & set(terms)
    assert all(len(term) >= 2 for term in terms)


# Material 9.8's search worker, started as the site's pages start it: a message sets it up with
# the index, then one a query (its protocol: SETUP 0, READY 1, QUERY 2, RESULT 3). Per query: the
# first three pages found, the words the best result says are missing, and each word a result
# says is missing though its text holds it.
SEARCH = """(async queries => {
  const config = JSON.parse(document.getElementById("__config").textContent);
  const base = new URL(config.base, location);
  const index = await (await fetch(new URL("search/search_index.json", base))).json();
  const worker = new Worker(new URL(config.search, location));
  const reply = () => new Promise(
    done => worker.addEventListener("message", e => done(e.data), {once: true}));
  worker.postMessage({type: 0, data: {config: index.config, docs: index.docs,
                                      options: {suggest: false}}});
  await reply();
  const text = item => (item.title + " " + item.text).replace(/<[^>]+>/g, "")
    .replace(/\u200b/g, "").toLowerCase();
  const missing = item => Object.keys(item.terms).filter(term => !item.terms[term]);
  const found = {};
  for (const query of queries) {
    worker.postMessage({type: 2, data: query});
    const groups = (await reply()).data.items;
    found[query] = {
      pages: groups.slice(0, 3).map(group => group[0].location.split("#")[0]),
      missing: groups.length ? missing(groups[0][0]) : [],
      present: groups.flat().flatMap(item => missing(item).filter(t => text(item).includes(t))),
    };
  }
  worker.terminate();
  return found;
})"""


def search_in_the_browser(browser, url: str, queries: list[str]) -> dict:
    browser.open(url, "document.readyState === 'complete'")
    reply = browser.call("Runtime.evaluate", expression=f"{SEARCH}({json.dumps(queries)})",
                         awaitPromise=True, returnByValue=True, timeout=60_000)
    assert "exceptionDetails" not in reply, reply["exceptionDetails"]
    return reply["result"]["value"]


def test_a_chinese_search_ranks_the_chapter_that_teaches_the_term_first(browser, served):
    queries = [term for terms in TAUGHT.values() for term in terms]
    found = search_in_the_browser(browser, urljoin(served, "zh/"), queries)
    wrong = {term: {"expected": f"{name}/", **found[term]}
             for name, terms in TAUGHT.items() for term in terms
             if found[term]["pages"][:1] != [f"{name}/"] or found[term]["missing"]
             or found[term]["present"]}
    assert not wrong, "\n".join(f"{term}: {why}" for term, why in wrong.items())


def test_a_chinese_word_is_found_inside_a_longer_one(browser, served):
    """Chinese compounds freely: 分叉 finds chapter 5's heading "工作区分叉", which holds it, and
    a term typed halfway (原子写) already finds its chapter."""
    queries = ["分叉", "原子写", "工作区 分叉"]
    found = search_in_the_browser(browser, urljoin(served, "zh/"), queries)
    assert found["分叉"]["pages"][0] == "05-parallel/" and not found["分叉"]["present"]
    assert found["原子写"]["pages"][0] == "02-tools/" and not found["原子写"]["missing"]
    assert found["工作区 分叉"]["pages"][0] == "05-parallel/"
    assert not found["工作区 分叉"]["missing"]


def first_code_under_a_heading(nb: dict) -> tuple[str, str]:
    """The first heading of a notebook (after its title, one in plain words) that a code cell
    follows, and the first line of that code."""
    heading = None
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            if headings := re.findall(r"^#{2,6} +(.+?)\s*$", source, re.M):
                heading = None if re.search(r"[`*\[<]", headings[-1]) else headings[-1]
        elif heading and source.strip():
            return heading, next(line.strip() for line in source.splitlines() if line.strip())
    raise AssertionError("no code follows a plain heading")


@pytest.mark.parametrize("lang", LANGS)
def test_a_notebook_is_indexed_by_section_like_a_markdown_page(site, lang):
    """Each heading's entry holds what follows it, up to the next heading, its code and outputs
    included; the page's own entry is its title and introduction; no title ends with the ¶ of the
    heading's link."""
    docs = search_index(site, lang)["docs"]
    for name in CHAPTERS:
        entries = [doc for doc in docs if doc["location"].split("#")[0] == f"{name}/"]
        nb = notebook(name, lang)
        title = re.search(r"^# +(.+)$", markdown_of(nb), re.M)[1].strip()
        assert entries[0]["location"] == f"{name}/" and plain(entries[0]["title"]) == title
        assert not [doc["title"] for doc in entries if "¶" in doc["title"]]
        heading, line = first_code_under_a_heading(nb)
        (section,) = [doc for doc in entries if plain(doc["title"]) == heading]
        assert line in plain(section["text"]), (name, heading, line)
        assert line not in plain(entries[0]["text"]), (name, line)


def test_the_glossary_and_the_style_sheet_rank_after_the_pages_that_teach(site):
    assert hook.REFERENCE_BOOST < hook.ESSAY_BOOST < 1
    for lang in LANGS:
        boosts = {doc["location"].split("#")[0]: doc.get("boost", 1)
                  for doc in search_index(site, lang)["docs"]}
        assert boosts["glossary/"] == boosts["style-zh/"] == hook.REFERENCE_BOOST
        assert boosts["essays/02-tools/"] == hook.ESSAY_BOOST
        assert boosts["02-tools/"] == boosts[""] == 1


def test_the_sitemaps_list_every_page_and_nothing_else(site):
    """Each language's sitemap lists each of its pages, at the site's address, and nothing that
    is not built (no 404s)."""
    for lang in LANGS:
        root, base = (site, SITE_URL) if lang == "en" else (site / lang, f"{SITE_URL}{lang}/")
        urls = re.findall(r"<loc>([^<]*)</loc>", (root / "sitemap.xml").read_text("utf-8"))
        assert urls and all(url.startswith(base) for url in urls), urls[:3]
        listed = {root / unquote(url.removeprefix(base)) / "index.html" for url in urls}
        built = {page for page in root.rglob("index.html")
                 if lang != "en" or not page.is_relative_to(site / "zh")}
        assert not listed - built, f"{lang}: listed, not built: {sorted(listed - built)}"
        assert not built - listed, f"{lang}: built, not listed: {sorted(built - listed)}"


@pytest.mark.parametrize("lang", LANGS)
def test_module_pages_show_the_real_source(site, lang):
    for module in hook.modules(ROOT):
        rel = module.relative_to(ROOT)
        shown = text_of(page(site, lang, rel.with_suffix("").as_posix() + "/"))
        for line in module.read_text(encoding="utf-8").splitlines():
            assert line.strip() in shown, f"{rel}: missing {line!r}"
        assert {"en": "The real source of", "zh": "的真实源码"}[lang] in shown  # the prose is translated


def test_includes_resolve_in_the_essays(site):
    for essay in sorted((ROOT / "essays").glob("*.md")):
        includes = [m["path"] + (f"::{m['name']}" if m["name"] else "")
                    for m in hook.INCLUDE.finditer(essay.read_text(encoding="utf-8"))]
        name = essay.name.removesuffix(".md").removesuffix(".zh")
        built = page(site, "zh" if essay.name.endswith(".zh.md") else "en", f"essays/{name}/")
        assert "<!-- include:" not in built
        for include in includes:
            assert f'<span class="filename">{include}</span>' in built, f"{essay.name}: {include}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_essays_link_to_the_source_lands_on_the_first_line_of_the_module_page(site, lang):
    built = page(site, lang, "essays/01-the-loop/")
    links = re.findall(r'href="\.\./\.\./corecoder/([\w/]+)/#(__codelineno-0-\d+)"', built)
    assert len(links) >= 5, "the links under the includes, rewritten for the site"
    for module, anchor in links:
        assert f'id="{anchor}"' in page(site, lang, f"corecoder/{module}/"), (module, anchor)


@pytest.mark.parametrize("url", [f"{name}/" for name in CHAPTERS] + [
    f"essays/{p.stem}/" for p in hook.essays(ROOT)] + [""])
def test_chinese_headings_get_ids_that_the_links_reach(site, url):
    tags = Tags(page(site, "zh", url))
    ids = {a.get("id") for _, a in tags.tags}
    headings = [a for t, a in tags.tags if re.fullmatch(r"h[1-6]", t)]
    assert headings and all(a.get("id") for a in headings), f"zh/{url}: a heading without an id"
    for a in tags.find("a"):
        if a.get("href", "").startswith("#") and {"md-nav__link", "headerlink", "anchor-link"} & set(
                a.get("class", "").split()):
            assert a["href"][1:] in ids, f"zh/{url}: {a['href']} reaches nothing"


WIDGET_CDN = re.compile(r"@jupyter-widgets/|jupyter-widgets|requirejs|require\.js")


def test_no_cdn_or_web_fonts(site):
    """The site works offline: no external script, stylesheet or font (widget managers aside: their output is
    never essential, the notebooks print a text twin)."""
    for file in site.rglob("*.html"):
        text = file.read_text(encoding="utf-8")
        tags = Tags(text)
        urls = [a.get("src", "") for a in tags.find("script")] + [a.get("href", "") for a in tags.find("link")]
        urls += re.findall(r"""(?:import\(|@import\s*|url\()\s*["']?((?:https?:)?//[^"')\s]+)""", text)
        external = [u for u in urls if re.match(r"(https?:)?//", u) and not WIDGET_CDN.search(u)
                    and not u.startswith(SITE_URL)]  # its own address: the canonical link
        assert not external, f"{file.relative_to(site)}: {external}"
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text


def test_the_site_publishes_no_file_of_the_repository_tooling(site):
    """docs/ also holds the build's hooks and a lint config: they stay out of what readers download."""
    assert not list(site.rglob("ruff.toml")) and not (site / "hooks").exists()


# --- a real browser ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.mark.parametrize("name", CHAPTERS)
@pytest.mark.parametrize("lang", LANGS)
def test_a_real_browser_renders_a_chapter(browser, served, lang, name):
    nb = notebook(name, lang)
    title = re.search(r"^# +(.+)$", markdown_of(nb), re.M)[1].strip()
    outputs = [line for cell in nb["cells"] if cell["cell_type"] == "code" for out in cell.get("outputs", [])
               if out.get("output_type") == "stream" for line in "".join(out["text"]).splitlines() if line.strip()]
    url = urljoin(served, f"{'' if lang == 'en' else lang + '/'}{name}/")
    text = browser.open(url, "document.readyState === 'complete' && document.querySelector('article').innerText")
    assert title in text, "the chapter's title is not on the rendered page"
    assert browser.evaluate("document.documentElement.lang") == lang
    assert browser.evaluate("document.querySelectorAll('.jupyter-wrapper .jp-Cell').length") > 0
    if outputs:
        assert outputs[0].strip() in text, "the first printed output is not on the rendered page"
    assert '"cell_type"' not in text
    # Click the language switcher (Material's script may intercept the click): it must land on the twin.
    other = "zh" if lang == "en" else "en"
    browser.evaluate(f"document.querySelector('a.md-select__link[hreflang={other}]').click()")
    twin = urljoin(served, f"{'zh/' if other == 'zh' else ''}{name}/")
    browser.wait(f"location.href === {json.dumps(twin)} && document.readyState === 'complete'")
    assert browser.evaluate("document.documentElement.lang") == other


ESSAY_PAGES = sorted(p.name.removesuffix(".md") for p in (ROOT / "essays").glob("[0-9][0-9]-*.md")
                     if not p.name.endswith(".zh.md"))


@pytest.mark.parametrize("name", ESSAY_PAGES)
@pytest.mark.parametrize("lang", LANGS)
def test_a_real_browser_renders_an_essay_with_its_code_and_a_source_page_it_links(browser, served, lang, name):
    essay = ROOT / "essays" / (f"{name}.md" if lang == "en" else f"{name}.zh.md")
    source = essay.read_text(encoding="utf-8")
    title = re.search(r"^# +(.+)$", source, re.M)[1].strip()
    prefix = "" if lang == "en" else f"{lang}/"
    text = browser.open(urljoin(served, f"{prefix}essays/{name}/"),
                        "document.readyState === 'complete' && document.querySelector('article').innerText")
    assert title in text and browser.evaluate("document.documentElement.lang") == lang
    included = [(m["path"], m["name"]) for m in hook.INCLUDE.finditer(source)]
    for path, definition in included[:3]:  # the real code is on the page, highlighted
        code, _ = hook.include_source(ROOT, path, definition)
        first = next(line.strip() for line in code.splitlines() if line.strip())
        assert first in text, f"{name}: {path}::{definition} is not on the page"
    assert browser.evaluate("document.querySelectorAll('article .highlight code').length") >= min(len(included), 1)
    modules = sorted({path for path, _ in included if path.endswith(".py")})
    if modules:  # and the source page of the first module it includes renders too
        url = urljoin(served, f"{prefix}{modules[0].removesuffix('.py')}/")
        shown = browser.open(url, "document.readyState === 'complete' && document.querySelector('article').innerText")
        assert (ROOT / modules[0]).read_text(encoding="utf-8").splitlines()[0].strip() in shown


def test_a_real_browser_searches_in_chinese(browser, served):
    hits = browser.open(urljoin(served, "zh/?q=工具调用"),
                        "[...document.querySelectorAll('.md-search-result__item a')].map(a => a.href)")
    chapters = {urljoin(served, f"zh/{name}/") for name in CHAPTERS}
    assert chapters & {hit.split("?")[0].split("#")[0] for hit in hits}, hits
    # What the reader sees: the chapter that teaches the term first, and no "Missing" line under it.
    first = browser.open(urljoin(served, "zh/?q=原子写入"), """(item => item && {
        page: item.querySelector("a").href.split("?")[0],
        missing: [...item.querySelectorAll(".md-search-result__terms")].map(p => p.innerText)
    })(document.querySelector(".md-search-result__item"))""")
    assert first == {"page": urljoin(served, "zh/02-tools/"), "missing": []}
