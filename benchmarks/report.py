"""The targets, checked against the figures, and the figures as Markdown tables."""

from __future__ import annotations

DASH = "—"
# (name, where the figure is in the results, the limit; a negative limit -x means "at least x")
TARGETS = [
    ("scenario wall time, ours / upstream", ("scenario", "ratio", "seconds"), 0.65),
    ("scenario peak RSS, ours / upstream", ("scenario", "ratio", "peak_rss_mib"), 0.8),
    ("scenario bytes sent, ours / upstream", ("scenario", "ratio", "bytes_sent"), 1.0),
    ("cold start --version, ours / upstream", ("cold_start", "ratio", "--version"), 0.1),
    ("cold start --help, ours / upstream", ("cold_start", "ratio", "--help"), 0.1),
    ("long session overhead, round 500 / round 10", ("long_session", "ratio_last_to_10"), 1.5),
    ("the same in CPU time (robust to load)", ("long_session", "ratio_last_to_10_cpu"), 1.5),
    ("cached-price cost of the cache session, ours / upstream", ("cache", "cost_ratio"), 0.5),
    ("prefix reuse of the cache session, ours", ("cache", "ours", "prefix_reuse"), -0.97),
    ("cached-price cost of the compacting session, ours / upstream", ("compacting", "cost_ratio"), 0.8),
    ("compacting session, requests that extend the one before whole, ours",
     ("compacting", "ours", "extends"), -0.85),
    ("compacting session, the largest request / the window, ours",
     ("compacting", "ours", "largest_vs_window"), 1.0),
    # linear: 10 (ten times the fragments); re-joining on every fragment, as before #16: about 100
    ("reassembly time, 1 MB / 100 KB of arguments", ("reassembly", "growth_10x"), 15),
]


def dig(results: dict, path: tuple):
    for key in path:
        results = results.get(key) if isinstance(results, dict) else None
    return results


def check_targets(results: dict) -> list[dict]:
    """Each target with its measured ratio and whether it is met (None: not measured, e.g. no upstream)."""
    checked = []
    for name, path, limit in TARGETS:
        ratio = dig(results, path)
        met = None if ratio is None else ratio <= limit if limit >= 0 else ratio >= -limit
        checked.append({"target": name, "at_most": limit, "ratio": ratio, "met": met})
    return checked


def ratios(ours: dict, upstream: dict | None) -> dict:
    """ours / upstream for every figure both have."""
    if not upstream:
        return {}
    return {k: ours[k] / upstream[k] for k in ours if upstream.get(k)}


def fmt(value, unit: str = "", digits: int = 2) -> str:
    if value is None:
        return DASH
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and value >= 100):
        return f"{int(value):,}{unit}"
    return f"{value:,.{digits}f}{unit}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]


def scenario_table(s: dict) -> list[str]:
    ours, up = s["ours"], s.get("upstream")
    units = {"seconds": ("wall time", " s", 3), "peak_rss_mib": ("peak RSS", " MiB", 1),
             "requests": ("requests", "", 0), "bytes_sent": ("bytes sent", " B", 0)}
    rows = []
    for key, (label, unit, digits) in units.items():
        theirs = up["median"].get(key) if up else None
        rows.append([label, fmt(ours["median"].get(key), unit, digits), fmt(theirs, unit, digits),
                     fmt(s["ratio"].get(key), "", 3)])
    rows.append(["runs ok", f"{ours['runs'] - ours['failed']}/{ours['runs']}",
                 f"{up['runs'] - up['failed']}/{up['runs']}" if up else DASH, ""])
    return table(["scenario (median)", "ours", "upstream", "ours / upstream"], rows)


def cold_table(c: dict) -> list[str]:
    ms = c["median_ms"]
    rows = [["python -c pass", fmt(ms["python -c pass"], " ms", 1), fmt(ms["python -c pass"], " ms", 1), ""]]
    for flag in ("--version", "--help"):
        rows.append([f"corecoder {flag}", fmt(ms.get(f"ours {flag}"), " ms", 1),
                     fmt(ms.get(f"upstream {flag}"), " ms", 1), fmt(c["ratio"].get(flag), "", 3)])
    return table([f"cold start (median of {c['runs']})", "ours", "upstream", "ours / upstream"], rows)


def long_table(ls: dict) -> list[str]:
    rows = [[f"round {n}", fmt(ms, " ms", 3), fmt(ls["overhead_cpu_ms"][n], " ms", 3)]
            for n, ms in ls["overhead_ms"].items()]
    rows.append(["round 500 / round 10", fmt(ls["ratio_last_to_10"]), fmt(ls["ratio_last_to_10_cpu"])])
    rows.append(["characters sent in all", f"{ls['characters_sent']:,} (~{ls['characters_sent'] // 4:,} tokens)", ""])
    head = f"long session ({ls['rounds']} rounds ×{ls['repeats']}, {ls['seconds']} s each)"
    return table([head, "engine overhead per round (wall)", "(CPU)"], rows)


def cache_table(c: dict) -> list[str]:
    """The cache session's table, or the compacting session's (with what compaction did)."""
    ours, up = c["ours"], c.get("upstream") or {}
    rows = [[label, fmt(ours.get(key), "", 4), fmt(up.get(key), "", 4)] for key, label in (
        ("extends", "requests that start with the whole request before"),
        ("prefix_reuse", "prefix reuse"), ("ceiling", "the most any agent could reuse"),
        ("kept", "of each request, the share the next one starts with"),
        ("cost_vs_uncached", "cost, cached input at 10%, against no cache"))]
    if c.get("window"):
        rows += [["characters sent (summaries included)", f"{ours.get('characters', 0):,}",
                  f"{up.get('characters', 0):,}" if up else DASH],
                 [f"the largest request / the window ({c['window']:,} tokens)",
                  fmt(ours.get("largest_vs_window"), "", 3), fmt(up.get("largest_vs_window"), "", 3)],
                 ["compactions by tier", tiers(ours), tiers(up) if up else DASH]]
    rows.append(["cost, ours / upstream", fmt(c.get("cost_ratio"), "", 3), ""])
    return table([f"{c.get('session', 'cache session')} ({c['rounds']} rounds)", "ours", "upstream"], rows)


def tiers(agent: dict) -> str:
    done = agent.get("compactions") or {}
    return ", ".join(f"{n} {tier}" for tier, n in sorted(done.items())) or "none"


def reassembly_table(r: dict) -> list[str]:
    rows = [["the assembler, 1 MB", fmt(r["seconds"], " s", 3)],
            ["the assembler, 100 KB", fmt(r["seconds_small"], " s", 4)],
            ["keeping the fragments and joining them once, 1 MB (the baseline)",
             fmt(r["baseline_seconds"], " s", 4)],
            ["the assembler / the baseline", fmt(r["ratio_to_baseline"], "", 1)],
            ["100 KB through the loopback server and the openai client",
             fmt(r["client_seconds_small"], " s", 2)],
            ["of it, per fragment", fmt(r["client_us_per_fragment"], " µs", 0)]]
    return table([f"reassembly ({r['fragments']:,} fragments of 7 characters)", "time"], rows)


def course_table(c: dict) -> list[str]:
    if c.get("error"):
        return table(["the course", "time"], [["not measured", c["error"]]])
    rows = [[name, fmt(seconds, " s", 1)] for name, seconds in c["notebooks"]["seconds"].items()]
    rows += [[f"all notebooks ({lang})", fmt(s, " s", 1)] for lang, s in c["notebooks"]["by_language"].items()]
    rows.append(["mkdocs build --strict (en + zh)", fmt(c["site"]["seconds"], " s", 1)])
    return table(["the course", "time"], rows)


def targets_table(checked: list[dict]) -> list[str]:
    met = {True: "yes", False: "**no**", None: "not measured"}
    def limit(x: float) -> str:
        return f"at least {fmt(-x)}" if x < 0 else f"at most {fmt(x)}"

    return table(["target", "measured", "limit", "met"],
                 [[t["target"], fmt(t["ratio"], "", 3), limit(t["at_most"]), met[t["met"]]] for t in checked])


def headline(results: dict) -> str:
    m = results["machine"]
    load = f"load {m['load_average'][0]:.2f} before, {m['load_average_after'][0]:.2f} after"
    return (f"{results['date']} · {m['cpus']} cores, {m['machine']}, Python {m['python']} · {load}"
            f" · upstream: {results['upstream']}")


def render(results: dict) -> str:
    """The headline, then every table the results have, Markdown, blank lines between."""
    parts = [[headline(results)], scenario_table(results["scenario"]), cold_table(results["cold_start"]),
             long_table(results["long_session"]), cache_table(results["cache"]),
             cache_table(results["compacting"]), reassembly_table(results["reassembly"])]
    if results.get("course"):
        parts.append(course_table(results["course"]))
    parts.append(targets_table(results["targets"]))
    return "\n\n".join("\n".join(p) for p in parts)
