"""Checks for the exercises of chapter 10, your own engine.

    ch10.fetch_url  `FetchUrl(allow=())`, a read-only tool that fetches a web page's text for the
                    model, never from this machine or its private networks, plugged into a real
                    Agent in plan mode
    ch10.budget     `Budget(llm, prices, cap)`, a model that stops the run once what it cost has
                    reached the cap, plugged into a real Agent as its model

Both are declared exercises (kit.py) whose references are the chapter's: the engine has neither
a web tool nor a budget. Each is put to work in a real `Agent` and what the run showed is compared.

`ch10.fetch_url`: nothing leaves the machine. While a run lasts, `_socket.getaddrinfo` (which
`socket.getaddrinfo` calls, however it was imported) answers from a table (docs.example is a public
address, metadata.example 169.254.169.254, intranet.example 10.0.0.7, shared.example
100.100.100.200 (a provider's shared network: not global, and neither private, loopback nor
link-local), both.example a public and a private one, localhost both loopbacks; a literal address
in any of its spellings, 0x7f000001, 2130706433, 127.1, [::ffff:127.0.0.1], is read as the system
reads it, numerically, and nothing else resolves: no DNS query is ever made), and `socket.connect`
takes every socket to the checker's own HTTP server on 127.0.0.1 (only port 80 answers), the
address it was asked for noted. So a tool that lets a refused address through is seen connecting to
it, and the address itself is never reached. The server serves pages (HTML, plain text, JSON,
Latin-1, Chinese), pages that are not text, pages of exactly the limit and one character more, a
page that says it is 16.5 MB long and ends after twice the limit (a tool that reads it all, though
it cuts what it returns, meets its end too soon: IncompleteRead), errors (403, 404, 500), redirects
of every code to allowed and refused places and to a file: URL, a chain of five and of six. Two
hosts act out what a network does: slow.example never answers (a socket with a time limit reaches
it at once, with no waiting; one without gets the page, as if it had waited) and stuck.example is
where the user presses Ctrl+C while the tool connects. URLs are drawn from those hosts, paths and
schemes (http, https, file, ftp, gopher, none), with arguments that do not fit the schema now and
then (as JSON, as a model sends them), and `allow` from none, addresses and networks. Compared, for
each call: the text the model is sent (the long pages' first 18,000 characters and a note; other
text, by its first 60 characters and its length), or that it raised a ToolError and which facts its
words carry (the status, that it timed out, the type that is not text: a redirect's status is not
asked for), or another exception; the addresses it connected to; whether a call was not run (bad
arguments, refused by plan mode: the tool must say it changes nothing) or interrupted; whether the
run ended on Ctrl+C; and whether the tool has a description. A process-wide patch, so a run is one
at a time (as the kit runs them).

`ch10.budget`: each input is a price, a script of two or three turns of replies, each with tool
calls or the final answer and a usage (tokens in multiples of 15,625, prices that are powers of
two: every cost and every sum is exact, so a cap equal to a sum is met exactly, however an answer
adds), and a cap: what the first k replies cost (0 for none), exactly, a 64th of a dollar either
side, or out of reach. Before the agent runs, a second Budget of the answer's, for another agent in
the same process, with its own cap, spends through its own model. Compared, for each turn: how
many requests reached the model, and how the turn ended (an answer, a ModelError, another error;
the scripted model checks every request's history as the API does); then the text that was
streamed to the subscribers, and what the requests that reached the model cost, priced as the
engine's Ledger prices them.
"""

from __future__ import annotations

import http.server
import ipaddress
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from unittest import mock

from corecoder.agent import Agent
from corecoder.cli.pricing import Ledger, Price, cost_of
from corecoder.events import TextDelta, ToolCallFinished
from corecoder.messages import ModelError, Reply, Usage, user
from corecoder.permissions import PlanMode
from corecoder.scripted import ScriptedLLM
from corecoder.tool import Tool, ToolError

from ..checks import error_of, outcome
from ..kit import Exercise, Mistake
from ..seams import Seam
from ..words import say

# --- ch10.fetch_url ---------------------------------------------------------------------------


class FetchUrl(Tool):
    """The tool `fetch_url`: a web page's text for the model. Read-only; http and https only;
    never a page on this machine or its private networks, whatever name the URL gives it."""

    name = "fetch_url"
    description = ("Fetch a web page over http or https and return its text (at most 18,000 "
                   "characters). Pages on this machine or a private network are refused.")
    parameters = {"type": "object", "properties": {"url": {
        "type": "string", "description": "The page's address: http://... or https://..."}},
        "required": ["url"], "additionalProperties": False}
    LIMIT = 18_000  # characters read at most: the rest is cut, and the model told; the engine
    # sends the model 20,000 at most (calls.OUTPUT_LIMIT): the page and the note fit, uncut
    TEXT = ("text/", "application/json", "application/xml", "application/javascript")

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None  # not followed by urllib: run checks where it leads first

    def __init__(self, allow=()):
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), self.Stay)

    def check(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError(f"only http:// and https:// pages can be fetched, not {url!r}")
        try:
            found = socket.getaddrinfo(parts.hostname, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as e:
            raise ToolError(f"cannot find the host {parts.hostname!r}: {e}") from None
        for *_, address in found:  # every address: a name may have a public and a private one
            ip = ipaddress.ip_address(address[0])
            ip = getattr(ip, "ipv4_mapped", None) or ip  # ::ffff:10.0.0.7 is 10.0.0.7
            if not ip.is_global and not any(ip in network for network in self.allow):
                raise ToolError(f"{parts.hostname} is at {ip}, on this machine or a private "
                                "network: refused")

    def run(self, ws, url):
        for _ in range(6):  # the URL, then at most 5 redirects, each checked as the URL was
            self.check(url)
            try:
                with self.opener.open(url, timeout=10) as response:
                    kind = response.headers.get_content_type()
                    if not kind.startswith(self.TEXT):
                        raise ToolError(f"the page is {kind}, not text")
                    body = response.read(self.LIMIT + 1)  # no more: a page may never end
                    charset = response.headers.get_content_charset() or "utf-8"
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 303, 307, 308):
                    url = urllib.parse.urljoin(url, e.headers.get("Location", ""))
                    continue
                raise ToolError(f"the server answered {e.code} {e.reason}") from None
            except OSError as e:  # URLError, a time limit reached, a connection refused
                raise ToolError(f"could not fetch {url}: {getattr(e, 'reason', e)}") from None
            text = body[:self.LIMIT].decode(charset, errors="replace")
            if len(body) > self.LIMIT:
                text += f"\n[cut: the page goes on past {self.LIMIT:,} characters]"
            return text
        raise ToolError("more than 5 redirects: the page was not fetched")



LIMIT, SLOW, STUCK = FetchUrl.LIMIT, "93.184.215.20", "93.184.215.30"
LONG = "the quick brown fox jumps over the lazy dog 0123456789\n" * (LIMIT // 25)  # over 2 LIMITs
# each host the network knows, and its addresses
HOSTS = dict((name, addresses) for name, *addresses in map(str.split, (
    "docs.example 93.184.215.14", "metadata.example 169.254.169.254", "intranet.example 10.0.0.7",
    "both.example 93.184.215.14 192.168.1.20", "mapped.example ::ffff:10.0.0.7",
    "shared.example 100.100.100.200",
    "ula.example fd00::5", "localhost 127.0.0.1 ::1", f"slow.example {SLOW}",
    f"stuck.example {STUCK}")))
# each page the server has: its path, status, Content-Type (or Location), and text (any other
# path is /internal's). /huge says it is 16.5 MB long and ends after twice the limit: a tool that
# reads it all meets its end too soon
ROUTES = dict((p, (int(c), v, "".join(t))) for p, c, v, *t in (r.split(" ", 3) for r in (
        "/page 200 text/html;charset=utf-8 <h1>Fetching</h1><p>A page for the model.</p>",
        "/notes.txt 200 text/plain plain notes\n", "/data.json 200 application/json [1]",
        "/latin1.txt 200 text/plain;charset=iso-8859-1 café crème",
        "/zh.txt 200 text/plain;charset=utf-8 抓取一个网页", "/hop/0 200 text/plain hop 0",
        "/internal 200 text/plain internal: the instance's credentials\n",
        "/logo.png 200 image/png \x89PNG\r\n\x1a\n", "/blob 200 application/octet-stream \x89PNG",
        "/missing 404 text/html", "/broken 500 text/html", "/forbidden 403 text/plain",
        "/moved 301 /page", "/to-missing 301 /missing", "/to-file 302 file:///etc/passwd",
        "/to-meta 302 http://metadata.example/latest/", "/to-both 308 http://both.example/page",
        "/to-intranet 303 http://intranet.example/admin",
        "/to-loopback 307 http://127.0.0.1/admin", "/hop/1 302 /hop/0", "/hop/2 302 /hop/1",
        "/hop/3 302 /hop/2", "/hop/4 302 /hop/3", "/hop/5 302 /hop/4", "/hop/6 302 /hop/5",
        f"/exact 200 text/plain {LONG[:LIMIT]}", f"/over 200 text/plain {LONG[:LIMIT + 1]}",
        f"/huge 200 text/plain {LONG}")))
_SERVER, _CONNECTS = [], []  # the checker's own web server; the addresses a call connected to


class _Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code, value, text = ROUTES.get(self.path, ROUTES["/internal"])
        body = text.encode(value.partition("charset=")[2] or "utf-8")
        self.send_response(code)
        self.send_header("Location" if 300 <= code < 400 else "Content-Type", value)
        self.send_header("Content-Length", str(16_500_000 if self.path == "/huge" else len(body)))
        self.end_headers()
        self.wfile.write(body)


def _resolve(host, port=0, family=0, type=0, proto=0, flags=0, system=socket._socket.getaddrinfo):
    """What `socket.getaddrinfo` finds, while a run lasts: HOSTS' addresses, or a literal address
    as the system reads it (127.1, 0x7f000001 and 2130706433 are 127.0.0.1); nothing else: no DNS
    query is ever made. It stands in for `_socket.getaddrinfo`, which `socket.getaddrinfo` calls
    (so it answers `from socket import getaddrinfo` too)."""
    return [found for address in HOSTS.get(host, [host]) for found in system(
        address, port, family, type, proto, flags | socket.AI_NUMERICHOST)]


def _connect(sock, address, connect=socket.socket.connect):
    """`socket.connect`, while a run lasts: to the checker's server, whatever address it was asked
    for (noted). stuck.example is where the user presses Ctrl+C; nothing listens but on port 80;
    slow.example never answers: a time limit is reached at once; with none, the tool would wait
    for ever, and gets the page as if it had not. An IPv6 socket reaches the server as
    ::ffff:127.0.0.1."""
    _CONNECTS.append(address[0])
    if address[0] == STUCK:
        raise KeyboardInterrupt  # the user pressed Ctrl+C while it connected
    if address[1] != 80:
        raise ConnectionRefusedError(f"connection refused: nothing listens on {address[1]}")
    if address[0] == SLOW and sock.gettimeout() is not None:
        raise TimeoutError("timed out")
    connect(sock, ("::ffff:" * (sock.family == socket.AF_INET6) + "127.0.0.1",
                   _SERVER[0].server_port))


# what a ToolError's words must carry, where the reference's do: the status, the time limit (timed
# out, time out, timeout), the type that is not text
FACTS = ("403", "404", "500", "timed out", "image/png", "application/octet-stream")


def _came(call) -> str:
    """What a call of run came to: that it raised a ToolError, and the facts its words carry, or
    something else; else the text the model is sent (`str` of what it returned): the long pages'
    first LIMIT characters and a note, or a text told apart by its first 60 characters and its
    length; then the addresses it connected to meanwhile, in the order it first did."""
    value, text = call.value, str(call.value)
    if call.kind == "raised":
        came = "ToolError" + "".join(say(", saying ", "，说了 ") + f for f in FACTS if re.search(
            rf"\b{f}\b".replace("ed out", "e?d?[ _-]?out"), text, re.I)) if isinstance(
            value, ToolError) else say(f"raised {type(value).__name__}, not a ToolError",
                                       f"抛出了 {type(value).__name__}，不是 ToolError")
    elif text[:LIMIT] == LONG[:LIMIT] and len(text) <= LIMIT + 500 and not LONG.startswith(text):
        came = say(f"its first {LIMIT:,} characters, then a note",
                   f"它的前 {LIMIT:,} 个字符，然后是一条说明")
    else:
        came = say(f"{text[:60]!r}, {len(text):,} characters",
                   f"{text[:60]!r}，{len(text):,} 个字符")
    reached, _CONNECTS[:] = ", ".join(dict.fromkeys(_CONNECTS)), []  # in the order made
    return came + (say(f" (connected to {reached})", f"（连接了 {reached}）") if reached else "")


def _fetched(answer, allow: tuple, urls: tuple) -> tuple[str, ...]:
    """The answer, made with `allow`, the one tool of a real Agent in plan mode whose model
    calls it on each URL in one batch, offline: what came of each call (not run, and why; or
    `_came`), how the run ended, whether the tool has a description. The checker's server starts
    on the first run, and says nothing; no proxy is used."""
    if not _SERVER:
        _SERVER.append(http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages))
        _SERVER[0].handle_error = _Pages.log_message = lambda *args: None
        threading.Thread(target=_SERVER[0].serve_forever, daemon=True).start()
    with Seam({"secret.txt": "the key is 42\n"}) as seam, \
            mock.patch.object(socket._socket, "getaddrinfo", _resolve), \
            mock.patch.object(socket.socket, "connect", _connect), \
            mock.patch.object(socket, "gethostbyname", lambda host: _resolve(host)[0][4][0]), \
            mock.patch.object(urllib.request, "getproxies", dict):  # and no proxy
        tool, here = seam.spy(answer(allow), "run", _came), seam.roots[0].as_posix()
        calls = [{"name": "fetch_url", "arguments": url if url.startswith("{") else {
            "url": url.replace("<project>", here)}} for url in urls]
        seam.agent([{"tool_calls": calls}, "Done."], [tool], gates=[PlanMode(on=True)]).chat("Go.")
    ran, ended = iter(seam.calls), [e for e in seam.events if isinstance(e, ToolCallFinished)]
    seen = [f"{url!r} → " + (next(ran) if e.status in ("ok", "failed") else say(
        "not run: ", "没有运行：") + e.status) for url, e in zip(urls, ended, strict=False)]
    return tuple(seen + seam.notes() + [say(
        "no description: the model is not told what the tool does",
        "没有 description：模型不知道这个工具是做什么的")] * (not getattr(tool, "description", 1)))


# the hosts a URL names besides HOSTS (literal addresses in every spelling, a name that does not
# resolve); the calls that are not a URL of those (other schemes, none; arguments that do not fit
# the schema, as the model sends them: JSON); the allow lists
LITERALS, ODD, ALLOW = (
    ["127.0.0.1", "[::1]", "0x7f000001", "2130706433", "0.0.0.0", "127.1", "[::]",
     "[::ffff:127.0.0.1]", "169.254.169.254", "nowhere.example"],
    ["file://<project>/secret.txt", "ftp://docs.example/pub/", "gopher://docs.example/",
     "docs.example/page", "http:///page", '{"url": 7}', "{}",
     '{"url": "http://docs.example/page", "depth": 2}'],
    [(), (), ("127.0.0.1",), ("10.0.0.7",), ("10.0.0.7/24",), ("::1",),
     ("169.254.0.0/16", "fd00::/8")])


def _url_inputs():
    from hypothesis import strategies as st

    url = st.builds("{}://{}{}".format, st.sampled_from(["http"] * 7 + ["https"]), st.sampled_from(
        ["docs.example"] * 19 + [*HOSTS, *LITERALS]), st.sampled_from(sorted(ROUTES)))
    return st.tuples(st.sampled_from(ALLOW), st.lists(st.one_of(url, url, url, st.sampled_from(
        ODD)), min_size=1, max_size=4).map(tuple))


FETCH_EXAMPLES = [
    ((), ("http://docs.example/page", "http://docs.example/huge", "http://docs.example/logo.png")),
    ((), ("http://metadata.example/latest/", "http://both.example/page", "http://0x7f000001/",
          "http://[::ffff:127.0.0.1]/", "http://shared.example/page")),
    (("127.0.0.1",), ("http://127.0.0.1/notes.txt", "http://localhost/page",
                      "http://docs.example/to-loopback", "http://[::ffff:127.0.0.1]/page")),
    ((), ("http://docs.example/missing", "http://slow.example/page", "file://<project>/secret.txt",
          "ftp://docs.example/pub/", "http://docs.example/to-meta")),
    (("10.0.0.7/24",), ("http://docs.example/hop/5", "http://docs.example/hop/6",
                        "http://docs.example/to-intranet", "http://mapped.example/page",
                        "http://docs.example/exact", "http://docs.example/over")),
    (("127.0.0.0/8", "10.0.0.0/8", "192.168.0.0/16", "169.254.0.0/16"), (
        "http://docs.example/to-both", "http://docs.example/to-intranet",
        "http://docs.example/to-loopback", "http://docs.example/to-meta")),
    ((), ("http://docs.example/latin1.txt", "http://stuck.example/page",
          "http://docs.example/zh.txt"))]


def _fetch_diagnose(args, got, wanted) -> str | None:
    """Why, from the first call that came to something else, where no listed mistake says it."""
    mine, right = next(((m, r) for m, r in zip(got, wanted, strict=False) if m != r), ("", ""))
    return next((say(*why) for found, why in (
        (mine.endswith(" refused"), (  # by plan mode
            "plan mode refused your tool: it only reads, so say so (mutating = False, the Tool's "
            "default)",
            "计划模式拒绝了你的工具：它只读不写，那就如实声明（mutating = False，"
            "也就是 Tool 的默认值）")),
        ("KeyboardInterrupt" in wanted[-1] and "KeyboardInterrupt" not in got[-1], (
            "the user pressed Ctrl+C while the page loaded, and your tool went on: let "
            "KeyboardInterrupt through (catch OSError, or Exception, never a bare except: or "
            "BaseException)",
            "页面加载时用户按了 Ctrl+C，你的工具却继续运行：要让 KeyboardInterrupt 穿过去"
            "（捕获 OSError 或 Exception，不要用不带类型的 except: 或者 BaseException）")),
        ("timed out" in right and "ToolError" not in mine, (
            "a server that never answers would hold the agent for ever: give the request a time "
            "limit (urlopen(..., timeout=10)), and say in a ToolError that it timed out",
            "一个永远不回答的服务器会把智能体一直卡住：给请求设一个时间限制（urlopen(..., "
            "timeout=10)），超时了就抛出 ToolError，说明 timed out")),
        ("ToolError" in right, (
            "this call must fail with a ToolError whose words the model can act on: catch what "
            "fetching raises (urllib.error.HTTPError, URLError, TimeoutError: all of them "
            "OSError) and say what happened: the status the server answered (404), that the time "
            "limit was reached (\"timed out\"), the type that is not text (image/png)",
            "这个调用应该以 ToolError 失败，而且错误信息要让模型知道下一步怎么做：捕获抓取时"
            "抛出的异常（urllib.error.HTTPError、URLError、TimeoutError：都是 OSError），"
            "说出发生了什么：服务器回答的状态码（404）、超过了时间限制（\"timed out\"）、"
            "不是文本的那个类型（image/png）"))) if found), None)


FETCH_URL = Exercise(
    "ch10.fetch_url", FetchUrl, _url_inputs, lambda args: f"FetchUrl(allow={list(args[0])}) " + say(
        "as the one tool of a real Agent in plan mode, its model calling fetch_url on: ",
        "作为一个开着计划模式的真实 Agent 唯一的工具，它的模型依次调用 fetch_url：")
    + ", ".join(map(repr, args[1])), run=_fetched, examples=FETCH_EXAMPLES, max_examples=60,
    show=lambda seen: "\n    " + "\n    ".join(seen), diagnose=_fetch_diagnose,
    equivalent=dict.fromkeys((
        "with self.opener.open(url, timeout=10) as response: → with self.opener.open(url, "
        "timeout=9) as response:", "with self.opener.open(url, timeout=10) as response: → "
        "with self.opener.open(url, timeout=11) as response:"), "the time limit's length: the "
        "slow server here is waited for only as long as it takes to see that the tool set one")
    | dict.fromkeys(["body = response.read(self.LIMIT + 1) → body = response.read(self.LIMIT + 2)"],
                    "one byte more read past the limit, still bounded: the pages cut are cut the "
                    "same"),
    domain=("URLs of pages, huge pages, pages that are not text, errors, slow and interrupted "
            "servers, redirects to allowed and refused places, on host names that resolve to "
            "public, private, link-local and loopback addresses (or several), literal addresses "
            "in every spelling, other schemes; allow lists of addresses and networks",
            "各种 URL：普通页面、超大页面、不是文本的页面、错误、很慢的和被中断的服务器、"
            "跳转到允许和被拒绝的地方；主机名解析到公网、私有网络、链路本地和回环地址（或者好几个"
            "地址），各种写法的字面地址，其他协议；允许列表里有单个地址也有网段"),
    rule=("fetch_url (read-only; a required string url) returns the page's text as the server "
          "sent it, decoded with the charset it names (utf-8 when none); http and https only; "
          "before each request, the URL's and each redirect's (at most 5), every address its host "
          "resolves to must be public (is_global, an IPv4-mapped address as its IPv4) or in "
          "allow, else ToolError; read at most 18,000 characters (one more to know), and cut "
          "with a note; a status, a time limit reached, a type that is not text (text: text/*, "
          "application/json, application/xml, application/javascript): a ToolError that says "
          "it; Ctrl+C (KeyboardInterrupt) goes through",
          "fetch_url（只读；一个必填的字符串参数 url）返回服务器发来的页面文本，用它声明的 charset "
          "解码（没有声明就用 utf-8）；只接受 http 和 https；每次请求之前，不管是原 URL 还是每一次"
          "跳转（最多 5 次），主机名解析出来的每一个地址都必须是公网地址（is_global，IPv4 映射"
          "地址按它的 IPv4 算）或者在 allow 里，否则 ToolError；最多读 18,000 个字符（多读一个"
          "用来判断），超出就截断并附上说明；状态码、超时、不是文本的类型（文本指 text/*、"
          "application/json、application/xml、application/javascript）：抛出把它说出来的 "
          "ToolError；Ctrl+C（KeyboardInterrupt）要让它穿过去"),
    shape=("check(url): scheme; socket.getaddrinfo(host, None); for every address: ip_address, "
           "ipv4_mapped or it; not is_global and not in allow: raise ToolError. run: for _ in "
           "range(6): check(url); open with an opener that follows no redirect (a handler whose "
           "redirect_request returns None); a 3xx: url = urljoin(url, Location), continue; read("
           "LIMIT + 1)",
           "check(url)：协议；socket.getaddrinfo(host, None)；对每个地址：ip_address，取 "
           "ipv4_mapped 或它本身；不是 is_global 又不在 allow 里：raise ToolError。run：for _ in "
           "range(6)：check(url)；用一个不跟随跳转的 opener 打开（它的 handler 的 "
           "redirect_request 返回 None）；遇到 3xx：url = urljoin(url, Location)，continue；"
           "read(LIMIT + 1)"),
    mistakes=[
        Mistake("            if not ip.is_global and not any(ip in network for network in "
                "self.allow):",
                "            if parts.hostname == \"localhost\":", (
                    "a blocklist of names misses every other name for the same place: "
                    "127.0.0.1, 0x7f000001, 127.1, [::1], a name of your own that resolves to "
                    "10.0.0.7 or to 169.254.169.254 (the cloud's metadata). Judge the addresses "
                    "the host resolves to (socket.getaddrinfo), not its name",
                    "按名字拉黑名单，总会漏掉同一个地方的其他名字：127.0.0.1、0x7f000001、127.1、"
                    "[::1]，或者一个自己注册、解析到 10.0.0.7 或 169.254.169.254（云上的元数据"
                    "服务）的域名。要判断主机名解析出来的地址（socket.getaddrinfo），而不是名字")),
        Mistake("        for *_, address in found:", "        for *_, address in found[:1]:", (
            "a name may resolve to several addresses, a public one first and a private one "
            "after, and the connection may go to any of them: every one of them must pass "
            "(socket.gethostbyname gives one: ask socket.getaddrinfo for them all)",
            "一个名字可以解析出好几个地址，前面是公网的，后面是私有的，而连接可能连到其中任何一个："
            "每一个地址都必须通过检查（socket.gethostbyname 只给一个：用 socket.getaddrinfo "
            "把它们全拿到）")),
        Mistake("not ip.is_global and", "(ip.is_private or ip.is_loopback or ip.is_link_local) and",
                ("is_private, is_loopback and is_link_local each name some of the places a page "
                 "must not lead to, not all of them: 100.100.100.200 (a provider's shared "
                 "network, 100.64.0.0/10) is none of the three. Ask the one question that covers "
                 "them all: ip.is_global",
                 "is_private、is_loopback、is_link_local 各自只覆盖一部分不该去的地方，不是全部："
                 "100.100.100.200（运营商的共享地址段 100.64.0.0/10）三个都不是。问一个能把它们"
                 "全包进去的问题：ip.is_global")),
        Mistake("self.check(url)", "if _ == 0: self.check(url)", (
            "a redirect leads somewhere new, and your tool followed it unchecked: a "
            "public page may answer 302 to http://169.254.169.254/. Check where each "
            "redirect leads, as you checked the URL, before you follow it",
            "跳转会把请求带到一个新的地方，你的工具却没检查就跟了过去：一个公网页面"
            "可以回答 302，指向 http://169.254.169.254/。每次跳转之前，都要像检查原 URL "
            "一样检查它指向哪里")),
        Mistake("for _ in range(6):", "for _ in range(20):", (
            "a chain of redirects must end: a server may send the tool round for ever. Follow at "
            "most 5, then stop with a ToolError that says so",
            "跳转链必须有个头：服务器可以让工具一直绕圈子。最多跟随 5 次，然后抛出说明这一点的 "
            "ToolError")),
        Mistake("ip in network for", "ip == network.network_address for", (
            "allow holds networks as well as addresses: \"10.0.0.7/24\" allows "
            "10.0.0.7. Make each one an ip_network(a, strict=False) and ask whether the "
            "address is in it (ip in network), not whether it equals what was written",
            "allow 里既有单个地址也有网段：\"10.0.0.7/24\" 允许 10.0.0.7。把每一项都做成 "
            "ip_network(a, strict=False)，问地址在不在网段里（ip in network），而不是它"
            "是否等于写下的那个字符串")),
        Mistake(", self.Stay)", ")", (
            "urllib follows redirects by itself, silently: a public page that answers 302 "
            "to http://169.254.169.254/ is fetched from there. Follow no redirect in "
            "urllib (a redirect handler whose redirect_request returns None), and check "
            "where each one leads before you follow it",
            "urllib 会自己悄悄地跟随跳转：一个公网页面回答 302，指向 http://169.254.169.254/，"
            "就会从那里抓取。不要让 urllib 跟随跳转（用一个 redirect_request 返回 None 的 "
            "handler），每次跳转之前先检查它指向哪里")),
        Mistake("read(self.LIMIT + 1)", "read()", (
            "the whole page was read before it was cut: a page may be gigabytes, or "
            "never end. Read no more than you keep: response.read(LIMIT + 1), the one "
            "more to know it goes on",
            "整个页面先读进来再截断：页面可能有好几 GB，甚至永远读不完。保留多少就只读"
            "多少：response.read(LIMIT + 1)，多读的那一个只是为了知道后面还有")),
        Mistake("if not kind.startswith(self.TEXT):", "if False:", (
            "an image or a binary file is no text for the model: decoded, it is noise "
            "that fills its context. Look at the Content-Type first and refuse what is "
            "not text with a ToolError that names it (image/png)",
            "图片或二进制文件对模型来说不是文本：解码出来只是一堆噪声，还占满上下文。先看 "
            "Content-Type，不是文本就抛出 ToolError，说出它的类型（image/png）")),
        Mistake("ip = getattr(ip, \"ipv4_mapped\", None) or ip", "ip = ip", (
            "::ffff:10.0.0.7 is 10.0.0.7 written in IPv6 (IPv4-mapped): judge it, and "
            "match it against allow, as the IPv4 address it is (ip.ipv4_mapped)",
            "::ffff:10.0.0.7 就是用 IPv6 写的 10.0.0.7（IPv4 映射地址）：要把它当成它本来"
            "的 IPv4 地址来判断，和 allow 比较也一样（ip.ipv4_mapped）")),
        Mistake("not in (\"http\", \"https\"):", "== \"file\":", (
            "a blocklist of schemes misses the next one: ftp: connects too, and "
            "gopher:, data: and the rest are no web pages either. Allow http and https, "
            "refuse every other scheme",
            "按协议拉黑名单，总会漏掉下一个：ftp: 一样会去连接，gopher:、data: 之类也都不是"
            "网页。只允许 http 和 https，其他协议一律拒绝"))])


# --- ch10.budget ------------------------------------------------------------------------------

class Budget:
    """A model that stops the run once what its calls cost has reached `cap` (USD): `llm`'s
    replies passed through, each one's usage priced by a Ledger of `prices`."""

    def __init__(self, llm, prices, cap):
        self.llm = llm
        self.ledger = Ledger(prices)  # what the calls through this Budget cost, and only those
        self.cap = cap

    @property
    def model(self):
        return self.llm.model  # the loop reports each reply's usage under the model's name

    def chat(self, messages, tools=None, emit=None):
        spent = self.ledger.known_cost
        if spent >= self.cap:  # before the request: the one that crossed the cap is paid for
            raise ModelError(f"the budget of ${self.cap:g} is reached (${spent:.4f} spent): "
                             "raise the cap to go on")
        reply = self.llm.chat(messages, tools, emit)
        if reply.usage:  # a provider that reports none: nothing to count
            self.ledger.add(self.llm.model, reply.usage)
        return reply


def _costs(price: Price, turns: tuple) -> list[float]:
    """What each reply of a run costs, priced as the engine's Ledger prices it."""
    return [cost_of(usage, price) if usage else 0.0 for turn in turns for _, usage in turn]


def _spend_inputs():
    """A price, two or three turns (replies with tool calls, then the answer), and a cap: what the
    first k replies cost (k from 0: a cap of 0; every sum the run reaches), exactly, a 64th or a
    4096th of a dollar either side (closer than a cent: rounding shows), or a thousand dollars
    more: out of reach."""
    from hypothesis import strategies as st

    usage = st.none() | st.builds(Usage, *[st.sampled_from([0, 15_625, 62_500, 250_000])] * 3)
    turn = st.builds(lambda replies, answer: (*replies, (0, answer)), st.lists(
        st.tuples(st.integers(1, 2), usage), max_size=3), usage)
    price = st.builds(Price, *map(st.sampled_from, ([0.5, 1.0, 2.0], [1.0, 4.0, 8.0], [None, .25])))

    def capped(price, turns, k, d):  # the cap: what the first k replies cost, and d
        return price, max(0.0, sum(_costs(price, turns)[:k]) + d), turns

    return st.builds(capped, price, st.lists(turn, min_size=2, max_size=3).map(tuple), st.integers(
        0, 12), st.sampled_from([-1 / 64, -2**-12, 0, 2**-12, 1 / 64, 1000]))


def _spend_call(args) -> str:
    """A run as a hint shows it: the cap, the price, the tool calls in each turn's replies (0:
    the answer), what each reply costs."""
    price, cap, turns = args
    calls, costs = [[n for n, _ in turn] for turn in turns], _costs(price, turns)
    return say(f"Budget(llm, prices, cap) as a real Agent's model, a turn at a time: "
               f"cap=${cap:.8g}, {price}; tool calls in each turn's replies (0: the answer): "
               f"{calls}; each reply's cost: {costs}",
               f"Budget(llm, prices, cap) 作为真实 Agent 的模型，逐次对话：cap=${cap:.8g}, "
               f"{price}；每次对话里各个回复的工具调用数（0：最终回答）：{calls}；每个回复的花费："
               f"{costs}")


def _spent(answer, price: Price, cap: float, turns: tuple) -> tuple[str, ...]:
    """The answer, wrapping a scripted model, as the model of a real Agent, one chat a turn,
    after another Budget of the answer's spent through a model of its own: what each turn came
    to, the text streamed, what the requests that reached the model cost."""
    llm = ScriptedLLM([{"text": "Done.", "usage": usage and vars(usage), "tool_calls": [
        {"name": "read_file"}] * calls} for turn in turns for calls, usage in turn])
    prices, events, seen = {"scripted": price}, [], []
    # the tool calls find no tool: the loop goes on; then another agent's Budget, made after this
    # one, spends
    (agent := Agent(answer(llm, prices, cap), [])).subscribe(events.append)
    answer(ScriptedLLM([Reply(usage=Usage(250_000))]), prices, 1e3).chat([user("hi")], None, None)
    for n in range(1, len(turns) + 1):
        asked = len(llm.requests)
        kind, error = outcome(agent.chat, f"task {n}")  # the loop has ended the turn with it
        ended = say("answered", "回答了") if kind == "returned" else say("", "抛出 ") + (
            "ModelError" if isinstance(error, ModelError) else error_of(error))
        k = len(llm.requests) - asked
        seen.append(say(f"turn {n}: {k} request{'s' * (k != 1)}, then {ended}",
                        f"第 {n} 次对话：{k} 次请求，然后{ended}"))
    streamed = sum(isinstance(e, TextDelta) for e in events)
    paid = sum(_costs(price, turns)[:len(llm.requests)])
    return (*seen, say(f"text streamed in {streamed} piece{'s' * (streamed != 1)}; the "
                       f"requests cost ${paid:.8g}", f"流式输出了 {streamed} 段文本；这些请求花了 "
                       f"${paid:.8g}"))


BUDGET_EXAMPLES = [(Price(1.0, 4.0, 0.25), cap, (
    ((1, Usage(62_500, 15_625)), (2, Usage(62_500, 0, 15_625)), (0, Usage(15_625, 15_625))),
    ((1, None), (0, Usage(250_000, 15_625))))) for cap in (0.125, 0.1875, 0.0, 1000.0)]


def _budget_diagnose(args, got, wanted) -> str | None:
    """Why, where no listed mistake says it: no `model`; a ModelError that did not last; an
    answer made up in the model's place."""
    answered, refused = say("then answered", "然后回答了"), say("then ModelError",
                                                            "然后抛出 ModelError")
    asked = [say(": 0 requests", "：0 次请求") not in line for line in got[:-1]]  # in each turn
    return next((say(*why) for found, why in (
        (any("'model'" in line for line in got), (
            "the loop reads llm.model (it reports each reply's usage under it, and the Ledger "
            "prices it by it): give Budget a model, the wrapped model's name",
            "循环会读 llm.model（它用这个名字报告每个回复的 usage，Ledger 也按它定价）："
            "给 Budget 一个 model，也就是被包装的那个模型的名字")),
        (any(refused in line and any(asked[k + 1:]) for k, line in enumerate(got[:-1])), (
            "once the cap is reached it stays reached: keep what was spent (a new turn is no new "
            "budget), so that every later request is refused at once",
            "上限一旦达到就一直是达到的：花掉的钱要一直记着（新的一次对话不是新的预算），"
            "之后的每次请求都要立刻被拒绝")),
        (any(answered in g and refused in w for g, w in zip(got, wanted, strict=False)), (
            "raise ModelError when the cap is reached, rather than answer in the model's place: a "
            "made-up reply ends the turn as if the model had answered, and nothing tells the user "
            "the run was stopped",
            "达到上限时要抛出 ModelError，而不是替模型编一个回答：编出来的回复会让这次对话像"
            "模型正常回答了一样结束，没有任何东西告诉用户运行被停下了"))) if found), None)


BUDGET = Exercise(
    "ch10.budget", Budget, _spend_inputs, _spend_call, run=_spent, examples=BUDGET_EXAMPLES,
    show=lambda seen: "\n    " + "\n    ".join(seen), diagnose=_budget_diagnose, max_examples=80,
    domain=("prices with and without a cache rate, caps of 0, at exactly what the run has spent "
            "after a reply, a 64th of a dollar either side, out of reach; two or three turns of "
            "replies with tool calls or the answer, each with a usage or none; another Budget "
            "spending beside it",
            "有或没有缓存价格的定价；上限是 0、正好等于某个回复之后已经花掉的钱、比它多或少"
            "六十四分之一美元、永远达不到；两到三次对话，回复里有工具调用或者最终回答，有的带 "
            "usage，有的不带；旁边还有另一个 Budget 在花钱"),
    rule=("a Model (model: the wrapped one's name; chat(messages, tools, emit)): before each "
          "request, if what was spent is at or over the cap, raise ModelError saying so (the "
          "loop ends the turn with it, the history legal, and every later request is refused "
          "too); else pass the request through, emit included, and add the reply's usage, if it "
          "has one, to this Budget's own Ledger (ledger.add(model, usage): cached tokens at "
          "their rate, completion tokens too)",
          "一个 Model（model：被包装的那个模型的名字；chat(messages, tools, emit)）：每次请求之前，"
          "如果已经花掉的钱达到或超过上限，就抛出说明这一点的 ModelError（循环带着它结束这次对话，"
          "历史保持合法，之后的每次请求也都被拒绝）；否则把请求原样传过去，emit 也要传，再把回复的 "
          "usage（如果有）记进这个 Budget 自己的 Ledger（ledger.add(model, usage)：缓存的 token "
          "按缓存价，输出的 token 也要算）"),
    shape=("__init__: self.llm, self.ledger = Ledger(prices), self.cap; model: a property, "
           "self.llm.model; chat: spent = self.ledger.known_cost; spent >= self.cap: raise "
           "ModelError(...); reply = self.llm.chat(messages, tools, emit); if reply.usage: "
           "self.ledger.add(self.llm.model, reply.usage); return reply",
           "__init__：self.llm、self.ledger = Ledger(prices)、self.cap；model：一个 property，返回 "
           "self.llm.model；chat：spent = self.ledger.known_cost；spent >= self.cap 就 raise "
           "ModelError(...)；reply = self.llm.chat(messages, tools, emit)；if reply.usage："
           "self.ledger.add(self.llm.model, reply.usage)；return reply"),
    mistakes=[
        Mistake("            self.ledger.add(self.llm.model, reply.usage)",
                "            self.ledger.add(self.llm.model, reply.usage)\n"
                "            if self.ledger.known_cost >= self.cap:\n"
                "                raise ModelError(\"the budget is spent\")", (
                    "the request that crossed the cap was made and paid for, and its reply "
                    "thrown away: check before each request only, and let the reply that "
                    "crossed it through (the run stops at the next request)",
                    "越过上限的那次请求已经发出、已经付了钱，它的回复却被扔掉了：只在每次请求"
                    "之前检查，让越过上限的那个回复照常返回（运行会在下一次请求时停下）")),
        Mistake("if spent >= self.cap:", "if round(spent, 2) >= round(self.cap, 2):", (
            "compare what was spent with the cap as they are: rounded to the cent, "
            "$0.004 is $0.00, and a cap of $0.004 is reached before anything was spent "
            "(and a cap a fraction of a cent above a sum, at that sum)",
            "把已经花掉的钱和上限按原值比较：四舍五入到分，$0.004 就成了 $0.00，于是 "
            "$0.004 的上限在一分钱都没花的时候就算达到了（比某个累计值只高零点几分的上限，"
            "在那个累计值上也算达到了）")),
        Mistake("        self.ledger = Ledger(prices)", "        Budget.ledger = Ledger(prices)", (
            "what a Budget keeps (what was spent, its cap) was kept on the class, so every "
            "Budget in the process shares it: another agent's Budget, made later, spends "
            "against your cap, or replaces it. Keep it on the instance (self.ledger, self.cap)",
            "Budget 要记的东西（花掉的钱、上限）放在了类上，进程里所有 Budget 共用它：另一个"
            "智能体后来创建的 Budget 会花你的额度，或者把你的上限换掉。把它们放在实例上"
            "（self.ledger、self.cap）")),
        Mistake("        if spent >= self.cap:", "        if spent > self.cap:", (
            "a cap reached exactly is reached: spent >= cap stops the run (with >, a cap of 0 "
            "lets the first request through, and a run that spent exactly the cap goes on)",
            "正好花到上限也算达到上限：spent >= cap 就要停（用 >，上限为 0 时第一次请求也会放"
            "过去，正好花完上限的运行还会继续）")),
        Mistake("            raise ModelError(f", "            raise RuntimeError(f", (
            "raise ModelError (corecoder.messages): the command tells a model that failed for "
            "good from a bug by its type, and shows any other error as \"unexpected ... (a bug "
            "in corecoder: please report it)\"",
            "要抛出 ModelError（corecoder.messages）：命令行靠类型把“模型彻底失败”和 bug 区分开，"
            "别的异常都会显示成 \"unexpected ... (a bug in corecoder: please report it)\"")),
        Mistake("model, reply.usage)", "model, Usage(reply.usage.prompt_tokens, "
                "reply.usage.completion_tokens))", (
            "count the whole usage as it came: the cached prompt tokens have their own, lower "
            "rate (Price.cached_input), and the completion tokens cost too (often several times "
            "the prompt's price). Hand ledger.add the reply's Usage, and it prices each kind at "
            "its rate",
            "按 usage 原样整个算上：缓存命中的输入 token 有自己更低的价格（Price.cached_input），"
            "输出的 token 也要钱（单价常常是输入的好几倍）。把回复的 Usage 原样交给 ledger.add，"
            "它会按各自的价格计算")),
        Mistake("if reply.usage:", "if True:", (
            "a provider may report no usage (reply.usage is None): there is nothing to "
            "count then, and the run goes on",
            "有的服务商不报告 usage（reply.usage 是 None）：这时没什么可记的，"
            "运行照常继续")),
        Mistake("(messages, tools, emit)", "(messages, tools)", (
            "pass emit on: it is how the reply's text reaches the subscribers as it "
            "streams (the terminal, a notebook); without it nothing is shown until the "
            "run ends",
            "要把 emit 传下去：回复的文本就是靠它在流式输出时送到订阅者那里"
            "（终端、笔记本）；没有它，运行结束之前什么都看不到"))])
