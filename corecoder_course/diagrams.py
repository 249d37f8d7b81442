"""A chapter's diagram, drawn as SVG, in the notebook's language.

A diagram is a few boxes joined by arrows. It sits in a markdown cell of the chapter
(tagged `diagram`, its name in the cell's metadata), as an image whose source is the SVG
itself (a data URI): JupyterLab, GitHub and the course site all show it, with no script,
no file beside the notebook and no network (no CDN). GitHub shows no SVG a code cell
prints, which is why it is markdown. Its text, the same picture in words, is the image's
description.

Each diagram is written once here, its labels in both languages (`say`); sync.py writes
the cell of each language from it, so the two cannot drift. A box is (column, row, label);
an arrow joins two boxes, with an optional label. Later chapters add their own (the gate
chain, the tiers, the batch).
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field

from .words import say, speaking

BOX_WIDTH, BOX_HEIGHT, GAP_X, GAP_Y, MARGIN = 200, 54, 60, 46, 16
FONT = "font-family: 'Noto Sans', 'Noto Sans CJK SC', 'PingFang SC', 'Microsoft YaHei', sans-serif"


@dataclass
class Diagram:
    title: str
    boxes: dict[str, tuple[int, int, str]]  # name -> (column, row, label: lines split by "\n")
    arrows: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, label)
    text: str = ""  # the same picture, as text


def _centre(box: tuple[int, int, str]) -> tuple[float, float]:
    column, row, _ = box
    return (MARGIN + column * (BOX_WIDTH + GAP_X) + BOX_WIDTH / 2,
            MARGIN + 24 + row * (BOX_HEIGHT + GAP_Y) + BOX_HEIGHT / 2)


def _edge(start: tuple[float, float], end: tuple[float, float]) -> tuple[float, float]:
    """Where the line from `start` towards `end` leaves the box around `start`."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    if abs(dx) * BOX_HEIGHT > abs(dy) * BOX_WIDTH:
        scale = (BOX_WIDTH / 2) / abs(dx)
    else:
        scale = (BOX_HEIGHT / 2) / abs(dy)
    return start[0] + dx * scale, start[1] + dy * scale


def svg(d: Diagram) -> str:
    columns = 1 + max(c for c, _, _ in d.boxes.values())
    rows = 1 + max(r for _, r, _ in d.boxes.values())
    width = 2 * MARGIN + columns * BOX_WIDTH + (columns - 1) * GAP_X
    height = 2 * MARGIN + 24 + rows * BOX_HEIGHT + (rows - 1) * GAP_Y
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(d.title)}">',
           f'<style>text {{ {FONT}; fill: #1f2328; }}</style>',
           '<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
           'fill="#57606a"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{MARGIN}" y="{MARGIN + 12}" font-size="15" font-weight="bold">'
           f'{html.escape(d.title)}</text>']
    for start, end, label in d.arrows:
        a, b = _centre(d.boxes[start]), _centre(d.boxes[end])
        (x1, y1), (x2, y2) = _edge(a, b), _edge(b, a)
        out.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" '
                   'stroke="#57606a" stroke-width="1.6" marker-end="url(#head)"/>')
        if label:
            out.append(f'<text x="{(x1 + x2) / 2 + 6:.0f}" y="{(y1 + y2) / 2 - 6:.0f}" '
                       f'font-size="12" fill="#57606a">{html.escape(label)}</text>')
    for column, row, label in d.boxes.values():
        x = MARGIN + column * (BOX_WIDTH + GAP_X)
        y = MARGIN + 24 + row * (BOX_HEIGHT + GAP_Y)
        out.append(f'<rect x="{x}" y="{y}" width="{BOX_WIDTH}" height="{BOX_HEIGHT}" rx="8" '
                   'fill="#ddf4ff" stroke="#0969da" stroke-width="1.4"/>')
        lines = label.split("\n")
        for i, line in enumerate(lines):
            ty = y + BOX_HEIGHT / 2 + (i - (len(lines) - 1) / 2) * 17 + 5
            out.append(f'<text x="{x + BOX_WIDTH / 2:.0f}" y="{ty:.0f}" font-size="13" '
                       f'text-anchor="middle">{html.escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out)


# --- the diagrams ---------------------------------------------------------------------------

def _loop() -> Diagram:
    boxes = {
        "user": (0, 0, say("the user's message\njoins the history", "用户的消息\n加入历史")),
        "context": (1, 0, say("the context policy\nprepares the history", "上下文策略\n整理历史")),
        "model": (2, 0, say("the model replies:\ntext, tool calls or both",
                            "模型回复：\n文字、工具调用或两者")),
        "answer": (2, 1, say("no tool calls:\nthat text is the answer",
                             "没有工具调用：\n这段文字就是回答")),
        "calls": (1, 1, say("the executor runs each call;\neach gets one result",
                            "执行器运行每个调用，\n每个调用一个结果")),
    }
    arrows = [("user", "context", ""), ("context", "model", ""),
              ("model", "answer", say("no calls", "没有调用")),
              ("model", "calls", say("calls", "有调用")),
              ("calls", "context", say("next round", "下一轮"))]
    text = say("the user's message → the context policy prepares the history → the model replies\n"
               "  no tool calls: that text is the answer, and the loop stops\n"
               "  tool calls: the executor runs each one, each gets one result, and the next\n"
               "  round starts at the context policy (at most max_rounds rounds)",
               "用户的消息 → 上下文策略整理历史 → 模型回复\n"
               "  没有工具调用：这段文字就是回答，循环停下\n"
               "  有工具调用：执行器运行每个调用，每个调用一个结果，\n"
               "  然后从上下文策略开始下一轮（最多 max_rounds 轮）")
    return Diagram(say("The loop (chapter 1)", "循环（第 1 章）"), boxes, arrows, text)


def _engine() -> Diagram:
    boxes = {
        "tools": (0, 0, say("tools (2)\nread, edit, search, bash",
                            "工具（2）\n读、改、搜索、bash")),
        "context": (1, 0, say("context (4)\ncompaction", "上下文（4）\n压缩")),
        "model": (2, 0, say("the model (3)\nscripted, or over HTTP",
                            "模型（3）\n脚本化，或走 HTTP")),
        "parallel": (0, 1, say("parallel calls (5)\nsub-agents (6)",
                               "并行调用（5）\n子智能体（6）")),
        "loop": (1, 1, say("the loop (1)\nmessages, legality", "循环（1）\n消息、合法性")),
        "cli": (2, 1, say("the CLI (8)\nsessions, undo", "CLI（8）\n会话、撤销")),
        "gates": (0, 2, say("gates (7, 8): hooks,\nconsent, plan mode",
                            "关卡（7、8）：钩子、\n授权确认、计划模式")),
        "mcp": (1, 2, say("MCP servers (7)\nmore tools", "MCP 服务器（7）\n更多工具")),
    }
    arrows = [("loop", "tools", ""), ("loop", "context", ""),
              ("loop", "model", say("asks", "询问")), ("loop", "parallel", ""),
              ("cli", "loop", say("drives", "驱动")),
              ("loop", "gates", ""), ("loop", "mcp", "")]
    text = say("the loop (chapter 1) asks the model (3) and runs the tools (2); around it:\n"
               "context (4), parallel calls (5) and sub-agents (6), the gates every call passes\n"
               "(7, 8), the tools of MCP servers (7), and the CLI with its sessions (8)",
               "循环（第 1 章）询问模型（3），运行工具（2）；围绕着它的是：\n"
               "上下文（4）、并行调用（5）和子智能体（6）、每个调用都要经过的关卡（7、8）、\n"
               "MCP 服务器的工具（7），以及带会话的 CLI（8）")
    return Diagram(say("The finished engine, chapter by chapter", "完整的引擎，按章节看"),
                   boxes, arrows, text)


def _call() -> Diagram:
    boxes = {
        "call": (0, 0, say("the model's call:\na tool's name, JSON",
                           "模型的调用：\n工具名和 JSON 参数")),
        "admit": (1, 0, say("admit: the tool, the JSON,\nthe schema, each gate",
                            "admit：工具、JSON、\nJSON Schema、每个关卡")),
        "perform": (2, 0, say("perform: run the tool\n(a ToolError: failed)",
                              "perform：运行工具\n（ToolError 即失败）")),
        "bound": (2, 1, say("bound: head and tail;\nthe whole kept in a file",
                            "bound：保留首尾，\n全文存进文件")),
        "after": (1, 1, say("each gate's after:\na note on the result",
                            "每个关卡的 after：\n给结果加注")),
        "result": (0, 1, say("one result, the text\nthe model reads",
                             "一个结果，\n即模型读到的文字")),
    }
    arrows = [("call", "admit", ""), ("admit", "perform", say("admitted", "准入")),
              ("perform", "bound", ""), ("bound", "after", ""), ("after", "result", ""),
              ("admit", "result", say("refused", "拒绝"))]
    text = say("the model's call → admit: find the tool, parse the JSON, check it against the "
               "schema, ask each gate\n"
               "  refused (unknown tool, bad arguments, a gate's no): the reason is the result\n"
               "  admitted → perform runs the tool (a ToolError or any exception: failed) → bound "
               "keeps the head and tail and the whole in a file → each gate's after may add a "
               "note → one result",
               "模型的调用 → admit：找到工具、解析 JSON、对照 JSON Schema 检查、询问每个关卡\n"
               "  被拒绝（未知工具、参数错误、关卡说不）：拒绝的理由就是结果\n"
               "  准入 → perform 运行工具（ToolError 或任何异常：失败）→ bound 保留首尾、"
               "全文存进文件 → 每个关卡的 after 可以加一条注 → 一个结果")
    return Diagram(say("One call, one path (chapter 2)", "一个调用，一条路径（第 2 章）"),
                   boxes, arrows, text)


def _model() -> Diagram:
    boxes = {
        "loop": (0, 0, say("the loop asks\nchat(messages, tools)",
                           "循环调用\nchat(messages, tools)")),
        "scripted": (1, 0, say("ScriptedLLM, FunctionLLM:\na script, offline",
                               "ScriptedLLM、FunctionLLM：\n脚本，离线")),
        "llm": (1, 1, say("LLM: one request,\nits reply streamed",
                          "LLM：一次请求，\n回复以流的形式返回")),
        "server": (2, 1, say("a provider, or\nthe loopback server", "服务商，\n或本地回环服务器")),
        "failures": (2, 0, say("failures: retried,\nadapted, or explained",
                               "失败：重试、\n调整参数，或说明原因")),
        "reply": (0, 1, say("one Reply: text,\ntool calls, usage",
                            "一个 Reply：文字、\n工具调用、用量")),
    }
    arrows = [("loop", "scripted", ""), ("loop", "llm", ""), ("llm", "server", "HTTP"),
              ("llm", "failures", ""), ("scripted", "reply", ""), ("llm", "reply", "")]
    text = say("the loop asks chat(messages, tools) of whatever model it has: a scripted one "
               "(offline), or LLM, which sends one request over HTTP to a provider or to the "
               "loopback server and reads the reply as a stream; its failures are retried, "
               "adapted to, or explained; either way the loop gets one Reply: text, tool calls, "
               "usage",
               "循环向手里的模型调用 chat(messages, tools)：可以是脚本化模型（离线），"
               "也可以是 LLM，"
               "它通过 HTTP 向服务商或本地回环服务器发一次请求，以流的形式读回复；出了错，"
               "要么重试，要么调整参数，要么说明原因；无论哪种，循环拿到的都是一个 Reply："
               "文字、工具调用和用量")
    return Diagram(say("One chat(), three models (chapter 3)", "一个 chat()，三种模型（第 3 章）"),
                   boxes, arrows, text)


def _tiers() -> Diagram:
    boxes = {
        "round": (0, 0, say("a round begins:\nestimate the request", "新一轮开始：\n估算请求大小")),
        "trim": (1, 0, say("≥ 80 %: trim old long\noutputs, down to 40 %",
                           "≥ 80%：裁剪旧的长输出，\n降到 40%")),
        "summarize": (2, 0, say("still over 40 %: summarize\nolder turns (reset: only\n"
                                "the latest turn fits)",
                                "仍高于 40%：较早的回合\n写成摘要（重置：只放得下\n最新回合）")),
        "check": (2, 1, say("check_history\nafter every tier", "每一级之后\ncheck_history")),
        "ask": (1, 1, say("ask the model", "请求模型")),
    }
    arrows = [("round", "trim", ""), ("trim", "summarize", ""), ("summarize", "check", ""),
              ("check", "ask", ""), ("ask", "trim", say("too long: once more", "太长：再来一次"))]
    text = say("before each round the policy estimates the request; below 80 % of the window it "
               "sends the history as it is, so the request extends the one before; at 80 % it "
               "compacts, all at once, down to 40 %: first it trims old long tool outputs, oldest "
               "first (no model call); measured again, if that was not enough it summarizes older "
               "turns, keeping the recent ones that fit (a reset, when only the latest turn fits); "
               "the legality check runs after every tier; then the model is asked, and if the "
               "provider says the request is too long, the history is compacted harder and the "
               "model is asked once more",
               "每轮开始前，策略先估算请求的大小：不到窗口的 80% 时原样发送历史，"
               "请求便是上一个请求的延续；到 80% 时一次压缩到 40%：先从最旧的开始"
               "裁剪旧的长工具输出（不调用模型）；再量一次，还不够就把较早的回合写成摘要，"
               "放得下的近期回合原样保留（只放得下最新回合时就是重置）；每一级之后都检查"
               "历史是否合法；然后才请求模型，服务商若说请求太长，就压缩得更狠，再请求一次")
    return Diagram(say("Late, all at once, cheap before expensive (chapter 4)",
                       "晚一点、一次到位、先便宜后昂贵（第 4 章）"), boxes, arrows, text)


def _batch() -> Diagram:
    boxes = {
        "admit": (0, 0, say("admit every call,\none at a time", "逐个准入\n每一个调用")),
        "fork": (1, 0, say("a fork of the\nworkspace per call", "每个调用一份\n工作区分叉")),
        "run": (2, 0, say("run at once; a call on\na file takes its lock",
                          "同时运行；操作文件的\n调用持有该文件的锁")),
        "results": (2, 1, say("results filed\nby call id", "结果按调用 id\n归档")),
        "merge": (1, 1, say("forks merged\nin call order", "分叉按调用顺序\n合并回来")),
        "answer": (0, 1, say("the loop answers\nin call order", "循环按调用顺序\n写回应")),
    }
    arrows = [("admit", "fork", ""), ("fork", "run", ""), ("run", "results", ""),
              ("results", "merge", ""), ("merge", "answer", "")]
    text = say("every call of the batch is admitted first, one at a time; each gets a fork of the "
               "workspace; they run at once, a call on a file holding that file's lock; results "
               "are filed by call id as they finish; the forks are merged back in call order, and "
               "the loop writes the answers in call order, also after Ctrl+C",
               "这一批调用先逐个准入；每个调用拿到一份工作区分叉；它们同时运行，操作文件的调用"
               "持有该文件的锁；结果一完成就按调用 id 归档；分叉按调用顺序合并回来，循环也按调用"
               "顺序写回应，按下 Ctrl+C 之后同样如此")
    return Diagram(say("One batch, as if in sequence (chapter 5)",
                       "一批调用，如同依次执行（第 5 章）"), boxes, arrows, text)


def _team() -> Diagram:
    boxes = {
        "parent": (0, 0, say("the parent calls\nagent(tasks)", "父智能体调用\nagent(tasks)")),
        "spawn": (1, 0, say("spawn builds each\nworker: fresh history",
                            "spawn 造出每个 worker：\n全新的历史")),
        "run": (2, 0, say("at most 4 at once,\nthe parent's gates",
                          "同时最多 4 个，\n用父智能体的 gates")),
        "reports": (2, 1, say("each report bounded;\na failure is its report",
                              "每份报告有长度上限；\n失败只是它自己的报告")),
        "order": (1, 1, say("reports joined\nin input order", "报告按输入\n顺序拼起来")),
        "result": (0, 1, say("one tool result\nin the parent's history",
                             "父智能体历史里\n只多一个工具结果")),
    }
    arrows = [("parent", "spawn", ""), ("spawn", "run", ""), ("run", "reports", ""),
              ("reports", "order", ""), ("order", "result", "")]
    text = say("the parent's model calls the agent tool with up to 8 tasks; the spawn it "
               "was handed builds each worker with a fresh history, its own todo list and "
               "working directory, and every tool but agent; at most 4 run at once, under the "
               "parent's gates; each report is bounded, and a worker that fails gives only its "
               "own report; the reports are joined in input order, and the parent's history "
               "gains one tool result",
               "父智能体的模型调用 agent 工具，最多带 8 个任务；交给它的 spawn 为每个 worker "
               "造一个全新的历史，它有自己的待办列表和工作目录，除了 agent 之外的所有工具"
               "都能用；同时最多跑 4 个，受父智能体的 gates 约束；每份报告都有长度上限，"
               "失败的 worker 只影响它自己的报告；报告按输入顺序拼起来，父智能体的历史里"
               "只多一个工具结果")
    return Diagram(say("A team, bounded (chapter 6)", "有界的团队（第 6 章）"), boxes, arrows, text)


def _perimeter() -> Diagram:
    boxes = {
        "model": (0, 0, say("the model asks\nfor a call", "模型请求\n一个调用")),
        "gates": (1, 0, say("each gate in order:\nno, or a raise: refused",
                            "逐个问 gate：\n说不或抛异常：拒绝")),
        "tool": (2, 0, say("the tool runs: built-in,\nor an MCP server's",
                           "工具运行：内置的，\n或 MCP 服务器的")),
        "server": (2, 1, say("the server: a process,\na JSON line each way",
                             "服务器：一个进程，\n一来一回各一行 JSON")),
        "after": (1, 1, say("after-gates may add\na note (PostToolUse)",
                            "after 可以追加\n一条说明（PostToolUse）")),
        "result": (0, 1, say("one result\nin the history", "历史里的\n一个结果")),
    }
    arrows = [("model", "gates", ""), ("gates", "tool", ""), ("tool", "server", ""),
              ("server", "after", ""), ("after", "result", "")]
    text = say("the model asks for a call; each gate is asked in order (plan mode, consent, the "
               "user's PreToolUse hooks, your own), and a no or a gate that raises refuses it; "
               "the tool runs, a built-in one or an MCP server's, whose server is a process "
               "that gets one JSON-RPC line and answers with one; after the call, gates may "
               "add a note (PostToolUse hooks); the history gains one result",
               "模型请求一个调用；逐个询问 gate（plan 模式、用户同意、用户的 PreToolUse hook、"
               "你自己写的），任何一个说不或者抛出异常，调用就被拒绝；工具运行，可能是内置工具，"
               "也可能是 MCP 服务器的工具，服务器是一个进程，收到一行 JSON-RPC，回答一行；"
               "调用之后，gate 可以追加一条说明（PostToolUse hook）；历史里多出一个结果")
    return Diagram(say("The perimeter (chapter 7)", "边界（第 7 章）"), boxes, arrows, text)


def _guard() -> Diagram:
    boxes = {
        "model": (0, 0, say("the model asks\nto change a file", "模型要求\n改一个文件")),
        "plan": (1, 0, say("plan mode on?\nrefused, --yes or not",
                           "计划模式开着？\n拒绝，不管 --yes")),
        "hooks": (2, 0, say("the project's hooks:\nexit 2 vetoes", "项目的钩子：\nexit 2 否决")),
        "consent": (2, 1, say("consent: the user says\nonce, always or no",
                              "授权确认：用户说\n这一次、一直或不行")),
        "copy": (1, 1, say("a checkpoint: the file\nas it was", "检查点：文件\n原来的样子")),
        "run": (0, 1, say("the call runs;\n/undo can put it back", "调用运行；\n/undo 能改回去")),
    }
    arrows = [("model", "plan", ""), ("plan", "hooks", ""), ("hooks", "consent", ""),
              ("consent", "copy", ""), ("copy", "run", "")]
    text = say("the model asks to change a file; plan mode refuses it while it is on, whoever "
               "would allow it; the project's hooks may veto it; the user is asked, and answers "
               "once, always or no; only a call every gate let through gets a checkpoint, a copy "
               "of the file as it was; the call runs, and /undo can put the file back",
               "模型要求改一个文件；计划模式开着就拒绝，谁允许都不行；项目的钩子可以否决；"
               "然后问用户，用户回答这一次、一直允许或不行；只有所有关卡都放行的调用才建检查点，"
               "也就是文件原来的样子；调用运行，/undo 能把文件改回去")
    return Diagram(say("The gates, in the order of authority (chapter 8)",
                       "关卡，按谁说了算排序（第 8 章）"), boxes, arrows, text)


def _command() -> Diagram:
    boxes = {
        "settings": (0, 0, say("settings: flags, env,\n.env, provider/model",
                               "设置：参数、环境变量、\n.env、provider/model")),
        "assemble": (1, 0, say("one composition root:\nbuild_agent, the gates",
                               "唯一的组装点：\nbuild_agent 和各个关卡")),
        "agent": (2, 0, say("the agent: chapter 1's\nloop, emitting events",
                            "智能体：第 1 章的循环，\n只发事件")),
        "log": (2, 1, say("the session log:\nappend-only JSONL", "会话日志：\n只追加的 JSONL")),
        "screen": (1, 1, say("-p's printer or\nthe REPL's renderer",
                             "-p 的 Printer 或\nREPL 的 Renderer")),
        "resume": (0, 1, say("--resume: replay, repair,\na legal history",
                             "--resume：重放、修复，\n得到合法历史")),
    }
    arrows = [("settings", "assemble", ""), ("assemble", "agent", ""), ("agent", "log", ""),
              ("agent", "screen", ""), ("log", "resume", "")]
    text = say("the command reads its settings (flags, the environment, .env, provider/model), "
               "builds the agent in one composition root with its gates, and runs chapter 1's "
               "loop; the loop only emits events, and two subscribers listen: the session log, "
               "appended to as the history grows, and the screen (-p's printer or the REPL's "
               "renderer); --resume replays the log and repairs it into a legal history",
               "命令先读设置（命令行参数、环境变量、.env、provider/model），在唯一的组装点里连同各个"
               "关卡一起装好智能体，然后跑第 1 章的循环；循环只发事件，由两个订阅者接收：会话日志随"
               "历史增长往后追加，屏幕（-p 的 Printer 或 REPL 的 Renderer）负责显示；--resume "
               "重放日志，修复成合法的历史")
    return Diagram(say("The command: assembly and two subscribers (chapter 9)",
                       "命令：组装，加上两个订阅者（第 9 章）"), boxes, arrows, text)


def _yours() -> Diagram:
    boxes = {
        "kept": (0, 0, say("your answers, kept\nas each check passed",
                           "你的答案，\n每次检查通过时保存")),
        "stand": (1, 0, say("each stands in for\nthe shipped piece",
                            "每个顶替\n自带的那个组件")),
        "engine": (2, 0, say("build_agent:\nyour engine", "build_agent：\n你的引擎")),
        "tests": (2, 1, say("the package's own\ntests, on your pieces",
                            "包自己的测试，\n跑你的组件")),
        "beside": (1, 1, say("the tour and a long task,\nbeside the shipped one",
                             "导览和一个长任务，\n和自带的引擎并排跑")),
        "lab": (0, 1, say("the lab: each mechanism\nswitched off in turn",
                          "消融实验：\n依次关掉每种机制")),
    }
    arrows = [("kept", "stand", ""), ("stand", "engine", ""), ("engine", "tests", ""),
              ("engine", "beside", ""), ("beside", "lab", "")]
    text = say("every answer that passed its check was kept; each stands in for the shipped piece "
               "it re-derives, wherever the package holds it, and the seams take the rest; "
               "build_agent then makes your engine, which the package's own tests grade piece by "
               "piece, and which runs the tour and a long task beside the shipped engine, where "
               "the two first differ being your next lesson; the lab runs the same long task "
               "with each mechanism switched off in turn, to show what it was for",
               "每个通过检查的答案都保存下来了；它们各自顶替自己重新推导出来的那个自带组件（包里凡是"
               "用到它的地方都换掉），其余的从接缝接入；然后 build_agent 造出你的引擎："
               "包自己的测试逐个检验你的组件，它还和自带的引擎并排跑导览和一个长任务，两者第一次出现分歧的地方就是你"
               "的下一课；消融实验用同一个长任务，依次关掉每种机制，看它到底是做什么用的")
    return Diagram(say("Your engine, beside the shipped one (chapter 10)",
                       "你的引擎，和自带的并排（第 10 章）"), boxes, arrows, text)


DIAGRAMS = {"loop": _loop, "engine": _engine, "call": _call, "model": _model, "tiers": _tiers,
            "batch": _batch, "team": _team, "perimeter": _perimeter, "guard": _guard,
            "command": _command, "yours": _yours}


def markdown(name: str, lang: str) -> str:
    """The markdown cell that shows diagram `name` in `lang`: an image whose source is its SVG,
    described by its text."""
    if name not in DIAGRAMS:
        raise ValueError(f"no diagram {name!r}; there are: {', '.join(DIAGRAMS)}")
    with speaking(lang):
        d = DIAGRAMS[name]()
    data = base64.b64encode(svg(d).encode("utf-8")).decode("ascii")
    described = " ".join(f"{d.title}: {d.text}".split()).replace("[", "(").replace("]", ")")
    return f"![{described}](data:image/svg+xml;base64,{data})"
