"""The MkDocs hook that assembles the bilingual course site from the repository.

One build per language. `mkdocs build` builds English into `site/`; when it is done, this hook
builds Chinese into `site/zh/` from the same mkdocs.yml with the theme language set to `zh`.
Every page has the same path in both builds (`/01-loop/` and `/zh/01-loop/`), so the language
switcher links each page to its twin. We chose this over mkdocs-static-i18n because the pages come
from outside docs/ (notebooks/, essays/, corecoder/) and some are generated, which that plugin does
not handle, and because together with mkdocs-jupyter it renders notebooks as raw JSON.

Pages, and where they come from:
- `/` and `/zh/`: docs/index.md and docs/index.zh.md (other docs/*.md: the same twin rule).
- `/NN-slug/`: notebooks/NN-slug.ipynb and NN-slug.zh.ipynb, rendered by mkdocs-jupyter.
- `/essays/NN-slug/`: essays/NN-slug.md and NN-slug.zh.md.
- `/corecoder/agent/`, `/corecoder/tools/bash/`...: one page per engine module, generated here.
Each keeps its repository path as its MkDocs source path, so a link that works on GitHub
(`../notebooks/01-loop.ipynb` in an essay) works on the site too.

Code reaches the site only by reference: a line `<!-- include: corecoder/agent.py::Agent.run -->`
becomes that definition's real source (see `expand_includes`), and an include that does not
resolve fails the build.
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import os
import re
import textwrap
from pathlib import Path
from urllib.parse import unquote

import jinja2
from mkdocs.exceptions import PluginError
from mkdocs.plugins import CombinedEvent, event_priority
from mkdocs.structure.files import File

from authoring.essays import find_definition

log = logging.getLogger("mkdocs.hooks.course_site")  # under "mkdocs", so --strict counts its warnings

DEFAULT = "en"  # built at the site root; every other language under /<lang>/
TEXT = {
    "en": {
        "home": "Home", "chapters": "Chapters", "essays": "Essays", "source": "Engine source",
        "glossary": "Glossary", "chapter": "Chapter", "essay": "Essay", "definitions": "Definitions",
        "code": "Source",
        "intro": "The real source of `{path}` ({lines} lines), read from the repository when the site is "
                 "built: what you see here is what runs.",
        "defs_intro": "Its top-level definitions, with the line where each one starts:",
    },
    "zh": {
        "home": "首页", "chapters": "章节", "essays": "文章", "source": "引擎源码",
        "glossary": "术语表", "chapter": "章节", "essay": "文章", "definitions": "定义",
        "code": "源码",
        "intro": "`{path}` 的真实源码（共 {lines} 行），在构建站点时直接从仓库读入：这里看到的就是实际运行的代码。",
        "defs_intro": "它的顶层定义，以及每个定义起始的行号：",
    },
}

CHAPTER = re.compile(r"\d\d-[^.]+\.ipynb")  # notebooks/NN-slug.ipynb; twins add .zh before the extension
ESSAY = re.compile(r"\d\d-[^.]+\.md")
INCLUDE = re.compile(r"^(?P<indent>[ \t]*)<!--\s*include:\s*(?P<path>\S+?)(?:::(?P<name>[\w.]+))?\s*-->[ \t]*$", re.M)
CHAPTERS_MARKER = "<!-- chapters -->"
# An essay's link to the lines of a file, as GitHub numbers them (`../corecoder/agent.py#L96-L121`): on
# the site it lands on the first of those lines of the module's page.
SOURCE_LINES = re.compile(r"(\]\((?:\.\./)+corecoder/[\w/]+\.py)#L(\d+)-L\d+\)")


# --- includes: code by reference, never pasted -------------------------------------------------------------


class IncludeError(ValueError):
    """An include line that names no file or no definition: the build must stop, not show stale code."""


def include_source(root: str | os.PathLike, path: str, name: str | None = None) -> tuple[str, int]:
    """The source text an include names, and the line number it starts at in its file."""
    root = Path(root).resolve()
    file = (root / path).resolve()
    if not file.is_relative_to(root) or not file.is_file():
        raise IncludeError(f"{path}: no such file in the repository")
    text = file.read_text(encoding="utf-8")
    if name is None:
        return text.rstrip("\n"), 1
    try:
        node = find_definition(ast.parse(text, filename=path), name)  # the essays' links use it too
    except ValueError as e:
        raise IncludeError(str(e)) from None
    # Decorators belong to the definition; the node's own lineno is the `def` line.
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    lines = text.splitlines()[start - 1:node.end_lineno]
    return textwrap.dedent("\n".join(lines)), start


def code_block(code: str, *, lang: str, title: str, first_line: int, indent: str = "") -> str:
    """A fenced block that shows the real line numbers; the fence outgrows any backtick run in the code."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
    block = f'{fence}{lang} title="{title}" linenums="{first_line}"\n{code}\n{fence}'
    return textwrap.indent(block, indent) if indent else block


def expand_includes(markdown: str, root: str | os.PathLike) -> str:
    """Replace every `<!-- include: path[::Name] -->` line with a fenced block of the real source."""

    def replace(m: re.Match) -> str:
        path, name = m["path"], m["name"]
        code, first_line = include_source(root, path, name)
        lang = "python" if path.endswith(".py") else Path(path).suffix.lstrip(".") or "text"
        title = f"{path}::{name}" if name else path
        return code_block(code, lang=lang, title=title, first_line=first_line, indent=m["indent"])

    return INCLUDE.sub(replace, markdown)


# --- what the site holds, per language ---------------------------------------------------------------------


class SitePage(File):
    """A page whose source is not a .md file (a notebook, a module): MkDocs alone would copy it as a file."""

    def is_documentation_page(self) -> bool:
        return True


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def _language(config) -> str:
    return config.theme["language"]


def _twin(path: Path, lang: str) -> Path:
    """notebooks/01-loop.ipynb -> notebooks/01-loop.zh.ipynb for Chinese; the path itself if there is none."""
    if lang == DEFAULT:
        return path
    twin = path.with_name(f"{path.stem}.{lang}{path.suffix}")
    return twin if twin.exists() else path


def _dest_uri(stem: str, use_directory_urls: bool) -> str:
    """Where a page with this (language-free) name is written: the same path in every language."""
    if not use_directory_urls or stem == "index" or stem.endswith("/index"):
        return f"{stem}.html"
    return f"{stem}/index.html"


def _title(path: Path) -> str:
    """The first `# heading` of a notebook or a Markdown file."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    m = re.search(r"^# +(.+?)\s*$", text, re.M)
    return m[1] if m else path.stem


def chapters(root: Path) -> list[Path]:
    """Every chapter, picked up by name: notebooks/NN-slug.ipynb (English; the twins follow)."""
    return sorted(p for p in (root / "notebooks").glob("*.ipynb") if CHAPTER.fullmatch(p.name))


def essays(root: Path) -> list[Path]:
    return sorted(p for p in (root / "essays").glob("*.md") if ESSAY.fullmatch(p.name))


def modules(root: Path) -> list[Path]:
    """The engine and the command: corecoder/*.py, then each of its folders that a chapter reads
    (the tools, the MCP client, the command), a group each in the navigation."""
    package = root / "corecoder"
    return sorted(package.glob("*.py")) + [path for folder in ("tools", "mcp", "cli")
                                          for path in sorted((package / folder).glob("*.py"))]


def module_page(root: Path, module: Path, lang: str) -> str:
    """A module's page: a little prose in the page's language around the module's real, whole source."""
    t, rel = TEXT[lang], module.relative_to(root).as_posix()
    text = module.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=rel)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    parts = [f"# {rel}", "", t["intro"].format(path=rel, lines=len(text.splitlines())), ""]
    if defs:
        parts += [f"## {t['definitions']}", "", t["defs_intro"], ""]
        parts += [f"- `{n.name}` ({n.lineno})" for n in defs] + [""]
    parts += [f"## {t['code']}", "", f"<!-- include: {rel} -->", ""]
    return "\n".join(parts)


def site_pages(root: Path, lang: str, use_directory_urls: bool) -> list[dict]:
    """The pages this hook adds for one language: chapters, essays, module pages, each in a nav section."""
    pages = []
    for section, found in (("chapters", chapters(root)), ("essays", essays(root))):
        for path in found:
            source = _twin(path, lang)
            name = path.stem if section == "chapters" else f"essays/{path.stem}"
            pages.append({"section": section, "src_uri": source.relative_to(root).as_posix(), "path": source,
                          "dest_uri": _dest_uri(name, use_directory_urls), "title": None,
                          "missing_twin": source == path and lang != DEFAULT})
    for module in modules(root):
        rel = module.relative_to(root)
        pages.append({"section": "source", "src_uri": rel.as_posix(), "path": None,
                      "dest_uri": _dest_uri(rel.with_suffix("").as_posix(), use_directory_urls),
                      "title": rel.name, "package": rel.parent.as_posix(), "content": module_page(root, module, lang),
                      "missing_twin": False})
    return pages


def chapters_table(root: Path, lang: str) -> str:
    """The home page's table of chapters (and the essay of the same number), kept in step with the files."""
    t = TEXT[lang]
    essay_by_number = {p.name[:2]: p for p in essays(root)}
    rows = [f"| {t['chapter']} | {t['essay']} |", "|---|---|"]
    for chapter in chapters(root):
        nb = _twin(chapter, lang)
        cells = [f"[{_title(nb)}]({nb.relative_to(root).as_posix()})", ""]
        if essay := essay_by_number.get(chapter.name[:2]):
            essay = _twin(essay, lang)
            cells[1] = f"[{_title(essay)}]({essay.relative_to(root).as_posix()})"
        rows.append(f"| {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


# --- mkdocs-jupyter: Unicode heading ids ------------------------------------------------------------------


def _unicode_heading_ids() -> None:
    """mkdocs-jupyter slugifies notebook headings to ASCII, so a Chinese heading gets id="" (no TOC links, no
    search deep links). Give it pymdownx's Unicode slugify, the one mkdocs.yml gives Markdown pages. This patches
    two module attributes of mkdocs-jupyter 0.26 (pinned); tests/course/test_site.py checks the built ids."""
    import markdown
    from markdown.extensions.toc import TocExtension
    from mkdocs_jupyter import convert, plugin
    from pymdownx.slugs import slugify

    slug = slugify(case="lower")
    convert.slugify = lambda text: slug(text, "-")  # the ids in the notebook's HTML

    def markdown_toc(source: str, toc_depth: int) -> list:  # the ids in the page's TOC: the same slugify
        md = markdown.Markdown(extensions=[TocExtension(toc_depth=toc_depth, slugify=slug)])
        md.convert(source)
        return md.toc_tokens

    plugin._get_markdown_toc = markdown_toc


# --- Chinese search: the index and the query cut a term the same way --------------------------
#
# Material's search plugin cuts the Chinese of every page into words with jieba as it builds the
# index (it marks each cut with U+200B, which mkdocs.yml's separator splits on). A query typed in
# the browser is cut again, in the search worker, without jieba: each run of Han characters is
# matched against the words of the index. So jieba keeps every term whole (the user dictionary's
# and the glossary's: `glossary_terms`), and the worker cuts a query into the index's own words
# (`SEGMENT`). Chinese compounds freely (工作区分叉 holds 分叉): a Chinese word of a query finds the
# words of the index that hold it, not only those that begin with it.

GLOSSARY = "docs/glossary.md"
CHAPTER_TERMS = "docs/hooks/chapter_terms.txt"
DICTIONARY_FREQUENCY = 200000  # as in docs/hooks/jieba_user_dict.txt: jieba never cuts such a word
HAN_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")


def glossary_terms(root: Path) -> list[str]:
    """The Chinese terms of the glossary's table: each run of two Han characters or more in its
    Chinese column, without what a row adds in brackets (`工作区分叉（fork）` is 工作区分叉, and
    `重试 / 退避` two terms)."""
    terms: list[str] = []
    for line in (root / GLOSSARY).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or cells[1] == "中文" or "---" in cells[1]:
            continue
        for term in HAN_WORD.findall(re.sub(r"（[^）]*）", "", cells[1])):
            if term not in terms:
                terms.append(term)
    return terms


def chapter_terms(root: Path) -> dict[str, list[str]]:
    """The terms each chapter teaches, from CHAPTER_TERMS: `NN-slug term term...` a line."""
    taught: dict[str, list[str]] = {}
    for line in (root / CHAPTER_TERMS).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, *terms = line.split()
            taught[name] = terms
    return taught


def _keep_glossary_terms_whole(root: Path, frequency: int) -> None:
    import jieba

    for term in glossary_terms(root) + [t for terms in chapter_terms(root).values() for t in terms]:
        jieba.add_word(term, frequency)


# Material 9.8's search worker (pinned) cut a query's Han run with the function SEGMENT replaces. It
# never tried a piece that ends at the run's last character, so 原子写入 came out as 原子 and 写 (入
# lost), and it joined the pieces with "* ", which turned each but the last into a term "原子*" that
# no word matches: the result said "Missing: 原子*" on the very page that teaches 原子写入. SEGMENT
# cuts the run into the index's own words, longest first (the whole rest of the run when it is a
# word or the beginning of one, so that a term typed halfway finds the word), each with a leading
# wildcard, as one string joined by spaces, which the worker then reads as separate terms (and adds
# the trailing wildcard); each word is asked for as a whole word too, weighted EXACT_BOOST times,
# so that the word typed comes before a longer word that holds it. The worker reported a term
# "missing" from a result unless a matched word begins with it; FOUND lets a Chinese term be found
# inside a word too.
PATCHED = "/* course_site */"
SEGMENT = (re.compile(r'function (?P<name>[\w$]+)\((?P<run>[\w$]+),(?P<index>[\w$]+)\)\{'
                      r'let [\w$]+=new Set,[\w$]+=new Uint16Array\((?P=run)\.length\);'
                      r'.*?return [\w$]+\.has\(""\)\?new Set\(\[(?P=run)\]\):[\w$]+\}', re.S),
           PATCHED + """
function {name}(run, index) {{
  if ({name}.index !== index)
    {name}.words = Object.keys({name}.index = index);
  const words = [];
  for (let i = 0; i < run.length;) {{
    let j = run.length;
    const rest = run.slice(i);
    if (!(rest in index) && !{name}.words.some(word => word.startsWith(rest)))
      while (j > i + 1 && !(run.slice(i, j) in index))
        j--;
    words.push(run.slice(i, j) + "^" + {exact}, "*" + run.slice(i, j));
    i = j;
  }}
  return [words.join(" ")];
}}""")
EXACT_BOOST = 10
FOUND = (re.compile(r"(?P<word>[\w$]+\[[\w$]+\])\.startsWith\((?P<term>[\w$]+)\.term\)"),
         r"(/\p{{sc=Han}}/u.test({term}.term) ? {word}.includes({term}.term)"
         r" : {word}.startsWith({term}.term))")


def patch_search_worker(site_dir: str | os.PathLike) -> Path:
    """Put SEGMENT and FOUND into the built site's search worker (once: a rebuild may keep the
    file); fail the build if what they replace is not there."""
    workers = sorted(Path(site_dir, "assets", "javascripts", "workers").glob("search.*.min.js"))
    if len(workers) != 1:
        raise PluginError(f"course_site: expected one search worker, found {workers}")
    code = workers[0].read_text(encoding="utf-8")
    if PATCHED in code:
        return workers[0]
    for name, (pattern, replacement) in {"SEGMENT": SEGMENT, "FOUND": FOUND}.items():
        found = list(pattern.finditer(code))
        if len(found) != 1:
            raise PluginError(f"course_site: {workers[0].name} has {len(found)} places for {name}, "
                              "where Material 9.8 has one: Chinese queries would be cut wrong")
        code = code.replace(found[0][0], replacement.format(**found[0].groupdict(), exact=EXACT_BOOST))
    workers[0].write_text(code, encoding="utf-8")
    return workers[0]


# --- MkDocs events -----------------------------------------------------------------------------------------


@event_priority(100)  # before the search plugin reads its jieba dictionary
def on_config(config):
    root, lang = _root(config), _language(config)
    if lang not in TEXT:
        raise PluginError(f"course_site: no texts for theme language {lang!r}")
    _unicode_heading_ids()
    logging.getLogger("jieba").setLevel(logging.WARNING)  # the search plugin's segmenter: quiet unless it fails
    search = config.plugins.get("material/search")
    if search and search.config.jieba_dict_user:  # relative to mkdocs.yml, not to wherever mkdocs runs
        search.config.jieba_dict_user = str(root / search.config.jieba_dict_user)
        _keep_glossary_terms_whole(root, DICTIONARY_FREQUENCY)

    t, pages = TEXT[lang], site_pages(root, lang, config.use_directory_urls)
    docs = Path(config.docs_dir)
    home = "index.md" if lang == DEFAULT or not (docs / f"index.{lang}.md").exists() else f"index.{lang}.md"
    nav = [{t["home"]: home}]
    for section in ("chapters", "essays"):
        if entries := [p["src_uri"] for p in pages if p["section"] == section]:
            nav.append({t[section]: entries})
    packages: dict[str, list] = {}  # corecoder, corecoder/tools: sub-groups the reader can fold away
    for p in pages:
        if p["section"] == "source":
            packages.setdefault(p["package"], []).append({p["title"]: p["src_uri"]})
    nav.append({t["source"]: [{package: entries} for package, entries in packages.items()]})
    if (docs / "glossary.md").exists():
        nav.append({t["glossary"]: "glossary.md"})
    config.nav = nav
    return config


@event_priority(-50)  # after mkdocs-jupyter's on_files: our notebook pages are pages already
def on_files(files, config):
    root, lang = _root(config), _language(config)
    # docs/*.md: keep this language's file under the language-free name (index.zh.md -> index.html).
    for file in list(files):
        if not file.src_uri.endswith(".md") or file.src_dir is None:
            continue
        m = re.fullmatch(r"(.+)\.([a-z]{2})\.md", file.src_uri)
        if m is None:
            continue
        files.remove(file)
        if m[2] == lang:
            if plain := files.get_file_from_path(f"{m[1]}.md"):
                files.remove(plain)
            files.append(File(file.src_uri, file.src_dir, file.dest_dir, file.use_directory_urls,
                              dest_uri=_dest_uri(m[1], config.use_directory_urls)))

    for page in site_pages(root, lang, config.use_directory_urls):
        if page["missing_twin"]:
            log.warning(f"{page['src_uri']} has no '{lang}' twin: the '{lang}' site shows it as it is")
        if page["path"] is not None:
            file = SitePage.generated(config, page["src_uri"], abs_src_path=str(page["path"]))
        else:
            file = SitePage.generated(config, page["src_uri"], content=page["content"])
        file.dest_uri = page["dest_uri"]
        files.append(file)
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri.endswith(".ipynb"):  # mkdocs-jupyter renders notebooks from the file itself
        return markdown
    root, lang = _root(config), _language(config)
    if CHAPTERS_MARKER in markdown:
        markdown = markdown.replace(CHAPTERS_MARKER, chapters_table(root, lang))
    markdown = SOURCE_LINES.sub(r"\1#__codelineno-0-\2)", markdown)
    try:
        return expand_includes(markdown, root)
    except IncludeError as e:
        raise PluginError(f"{page.file.src_uri}: include failed: {e}") from None


NOTEBOOK_HEADING_ID = re.compile(r'(<h[1-6][^>]*? id="|<a class="anchor-link" href="#)([^"]*)"')
MERMAID_LOADER = re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>', re.S)
STYLE = re.compile(r"<style[^>]*>(.*?)</style>", re.S)
_stylesheets: dict[str, dict[str, str]] = {}  # site_dir -> {asset path: css}, written by on_post_build


def on_page_content(html, page, config, files):
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    # nbconvert percent-encodes heading ids (id="%E5%B7%A5..."), while the TOC and Markdown pages use the
    # Unicode slug itself (id="工具调用"): decode them so the TOC, the search deep links and toc.follow agree.
    html = NOTEBOOK_HEADING_ID.sub(lambda m: f'{m[1]}{unquote(m[2])}"', html)
    # nbconvert adds a script that imports Mermaid from a CDN when a page has diagrams; ours have none, and the
    # site must not depend on a CDN.
    html = MERMAID_LOADER.sub("", html)
    # mkdocs-jupyter inlines ~600 KB of notebook CSS into every notebook page (and the search plugin parses it
    # all): serve it once as a file named by its content, shared by every notebook page.
    css = "\n".join(STYLE.findall(html))
    if not css:
        return html
    asset = f"assets/stylesheets/notebook.{hashlib.sha256(css.encode()).hexdigest()[:8]}.css"
    _stylesheets.setdefault(config.site_dir, {})[asset] = css
    href = "../" * page.url.count("/") + asset
    return f'<link rel="stylesheet" href="{href}">\n' + STYLE.sub("", html)


class PageRelative(str):
    """A link already relative to the current page, which the theme's `url` filter must leave alone."""


def on_env(env, config, files):
    # MkDocs' `url` filter resolves a link against the site root, and cannot leave a site for its parent
    # ("../01-loop/" from a Chinese page comes out wrong). Our switcher links are page-relative already.
    url = env.filters["url"]

    @jinja2.pass_context
    def url_keeping_relative(context, value):
        return value if isinstance(value, PageRelative) else url(context, value)

    env.filters["url"] = url_keeping_relative
    return env


def _link_the_twin(context, page, config, nav):
    """Point the language switcher at this page's twin: the same path under the other language's root."""
    up = "../" * page.url.count("/")  # from this page to its own language's root
    if _language(config) != DEFAULT:
        up += "../"  # ... and on to the English root, which holds /zh/
    for alternate in config.extra.get("alternate", []):
        prefix = "" if alternate["lang"] == DEFAULT else f"{alternate['lang']}/"
        alternate["link"] = PageRelative(up + prefix + page.url or "./")
    return context


# What the search index reads of a page. The search plugin cuts a page into sections at its
# headings; a section ends where the element that holds its heading ends, and anything before the
# first heading (a <script>) makes a section of its own, the page's. A notebook's heading sits in
# its markdown cell's <div>s, and mkdocs-jupyter puts scripts before the title: each section of a
# chapter held one cell, and all the rest (the code, the outputs, the cells after the heading's)
# went to an empty page section, so no result led to its section, and a chapter that names a term
# in passing outranked the one that teaches it. So the index reads a notebook as it reads a
# Markdown page, from its title on: without its <div>s, scripts, stylesheet link and comments (the
# index keeps none of them) and without its headings' ¶ links. The page is rendered whole.
NOTEBOOK_FOR_THE_INDEX = re.compile(r'<script\b.*?</script>|</?div\b[^>]*>|<link\b[^>]*>|<!--.*?-->'
                                    r'|<a class="anchor-link"[^>]*>.*?</a>', re.S)
# Material multiplies a page's scores by its boost. An essay explains a chapter, which teaches:
# where both use a term alike, the chapter comes first. The glossary and the style sheet name every
# term (in a table, in an example): they come after the pages that teach it.
ESSAY_BOOST = 0.5
REFERENCE_BOOST = 0.2
_rendered: dict[int, str] = {}  # id(page) -> its HTML, while the index reads the other

# Where a term is taught. Lunr weighs a heading 1000 times a word of the text, so a later page that
# names a term in a heading (chapter 9's exercise "你自己的订阅者", chapter 5's "所有调用先准入")
# came before the chapter that teaches it, where the term is in bold in a long section. Each
# chapter lists the terms it teaches (CHAPTER_TERMS); the section of the chapter that teaches one
# is the first that has it in its heading or in bold, or else the first that uses it, and its
# entry in the index holds the term in a field of its own, `teaches`, which weighs more than a
# heading (TEACHES_BOOST). Every other use of the term, in a heading or not, ranks as before,
# after it. A term is matched inside longer words too (工作区 in 工作区分叉, see SEGMENT): the
# query asks for each of its words as a whole word as well, with EXACT_BOOST, so the section that
# teaches 工作区 comes before the one that teaches 工作区分叉.
TEACHES = "teaches"
TEACHES_BOOST = 1e4
TAG = re.compile(r"<[^>]+>")
SECTION_HEADING = re.compile(r'<h([1-6])\b[^>]*?\bid="([^"]*)"[^>]*>(.*?)</h\1>', re.S)
STRONG = re.compile(r"<(strong|b)\b[^>]*>(.*?)</\1>", re.S)
_teaching: dict[str, dict[str, list[str]]] = {}  # site_dir -> {index location: the terms taught there}


def teaching_sections(html: str, terms: list[str]) -> dict[str, list[str]]:
    """Which section of a page teaches each term: {its anchor ("" for the page's title): terms}.
    Sections are cut at the headings, as the search index cuts them; a term the page never uses
    is an error (the chapter's list is wrong)."""
    cuts = list(SECTION_HEADING.finditer(html))
    sections = []  # (anchor, heading text, what is in bold, all the text)
    for i, m in enumerate(cuts):
        body = html[m.end():cuts[i + 1].start() if i + 1 < len(cuts) else len(html)]
        anchor = "" if m[1] == "1" else m[2]
        bold = " ".join(TAG.sub("", b[2]) for b in STRONG.finditer(body))
        sections.append((anchor, TAG.sub("", m[3]), bold, TAG.sub("", m[3] + body)))
    found: dict[str, list[str]] = {}
    for term in terms:
        marked = [s for s in sections if term in s[1] or term in s[2]]
        used = marked or [s for s in sections if term in s[3]]
        if not used:
            raise PluginError(f"course_site: {CHAPTER_TERMS} says the page teaches {term}, "
                              "which it never uses")
        found.setdefault(used[0][0], []).append(term)
    return found


def add_what_sections_teach(site_dir: str | os.PathLike) -> None:
    """Write each section's `teaches` into the built search index, and the field's weight."""
    teaching = _teaching.pop(str(site_dir), {})
    if not teaching:
        return
    path = Path(site_dir, "search", "search_index.json")
    index = json.loads(path.read_text(encoding="utf-8"))
    entries = {doc["location"]: doc for doc in index["docs"]}
    for location, terms in teaching.items():
        if location not in entries:
            raise PluginError(f"course_site: the search index has no entry {location}")
        entries[location][TEACHES] = terms
    index["config"]["fields"][TEACHES] = {"boost": TEACHES_BOOST}
    path.write_text(json.dumps(index, separators=(",", ":")), encoding="utf-8")  # as Material writes it


@event_priority(50)  # before the search plugin indexes the page (at 0)
def _prepare_the_index(context, page, config, nav):
    src = page.file.src_uri
    if src.startswith("essays/"):
        page.meta.setdefault("search", {}).setdefault("boost", ESSAY_BOOST)
    elif src.endswith(".md") and "/" not in src and not src.startswith("index."):
        page.meta.setdefault("search", {}).setdefault("boost", REFERENCE_BOOST)
    if src.endswith(".ipynb") and page.content:
        _rendered[id(page)] = page.content
        page.content = NOTEBOOK_FOR_THE_INDEX.sub("", page.content).lstrip()
        terms = chapter_terms(_root(config)).get(Path(src).name.split(".")[0], [])
        if terms and _language(config) == "zh":  # the terms are Chinese
            teaching = _teaching.setdefault(str(config.site_dir), {})
            for anchor, taught in teaching_sections(page.content, terms).items():
                teaching[page.url + (f"#{anchor}" if anchor else "")] = taught
    return context


@event_priority(-50)  # after it
def _render_the_notebook(context, page, config, nav):
    if id(page) in _rendered:
        page.content = _rendered.pop(id(page))
    return context


on_page_context = CombinedEvent(_prepare_the_index, _link_the_twin, _render_the_notebook)


@event_priority(-50)  # after the search plugin has written the index
def on_post_build(config):
    """Write the notebook stylesheets and patch the search worker; then, after the English build,
    build every other language into <site_dir>/<lang>/ from the same config."""
    for asset, css in _stylesheets.pop(config.site_dir, {}).items():
        path = Path(config.site_dir, asset)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(css, encoding="utf-8")
    if config.plugins.get("material/search"):
        patch_search_worker(config.site_dir)
        add_what_sections_teach(config.site_dir)
    if _language(config) != DEFAULT:
        return
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    for alternate in config.extra.get("alternate", []):
        lang = alternate["lang"]
        if lang == DEFAULT:
            continue
        other = load_config(config.config_file_path, site_dir=os.path.join(config.site_dir, lang),
                            strict=config.strict)
        other.theme["language"] = lang
        # The site's address is the English build's (`mkdocs serve` sets its own): the canonical
        # links and the sitemap of /zh/ live under its /zh/. With none (a local build), both
        # sitemaps are empty, as MkDocs makes them.
        other.site_url = f"{config.site_url.rstrip('/')}/{lang}/" if config.site_url else None
        build(other)


def on_serve(server, config, builder):
    # `mkdocs serve` watches docs/ and mkdocs.yml; the pages also come from these.
    root = _root(config)
    for folder in ("notebooks", "essays", "corecoder"):
        if (root / folder).is_dir():
            server.watch(str(root / folder))
    return server
