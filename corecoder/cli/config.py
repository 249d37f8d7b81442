"""Which model to talk to, where it lives, and with which key.

Everything comes from one merged view of the settings: the real environment laid
over a `.env` file (the environment wins, so a one-off `CORECODER_MODEL=... corecoder`
beats the file). The `.env` is the project's, though, and a cloned project is not the
user's: an endpoint it names gets only a key from that same file, never the user's key
from the environment (which would hand the key and the conversation to whoever wrote the
file); a key it names never replaces the user's own; and it cannot move CORECODER_HOME,
where the user's own trusted settings live. Where the conversation goes and with which key
(ROUTES) are the project's to choose only once the user trusts it: the command loads the
config twice, with and without the project's routes, and asks (see cli/app.py).

A model is named `provider/model`; the provider part picks a preset (base URL, key
variable, quirks), and anything else is sent to OpenAI or to whatever OpenAI-compatible
server `OPENAI_BASE_URL` points at. Nothing here touches the network or creates files:
`load_config` only reads, so it is cheap to call and easy to test.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from urllib.parse import urlsplit

from ..files import CONFIG_LIMIT, NotARegularFile, read_regular
from ..workspace import git_root


class ConfigError(Exception):
    """A setting is missing or wrong. The message says exactly what to set."""


# The command's flags that stand for a setting (corecoder --help). A flag wins over the variable,
# so an error about the value names the flag when it was given: the words the user typed.
FLAGS = MappingProxyType({"CORECODER_BASE_URL": "--base-url", "CORECODER_API_KEY": "--api-key",
                          "CORECODER_MAX_TOKENS": "--max-tokens",
                          "CORECODER_TEMPERATURE": "--temperature"})


def as_typed(error: ConfigError, flags: Mapping[str, str]) -> ConfigError:
    """`error`, naming the flag instead of its setting when the setting came from `flags`."""
    name = next((n for n in flags if str(error).startswith(f"{n} ")), None)
    return ConfigError(FLAGS[name] + str(error)[len(name):]) if name in FLAGS else error


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str | None  # None: the openai client's own default
    key_env: tuple[str, ...]  # variables that may hold its key, in the order tried
    needs_key: bool = True  # local servers take any key, but the client insists on one
    stream: bool = True
    # DeepSeek and Kimi reject tool-call turns without their reasoning
    reasoning_in_history: bool = False


# The providers' own documented OpenAI-compatible endpoints (checked 2026-11).
PROVIDERS: Mapping[str, Provider] = MappingProxyType({p.name: p for p in (
    Provider("openai", None, ("OPENAI_API_KEY",)),
    Provider("deepseek", "https://api.deepseek.com", ("DEEPSEEK_API_KEY",),
             reasoning_in_history=True),
    Provider("qwen", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
             ("DASHSCOPE_API_KEY",)),
    Provider("kimi", "https://api.moonshot.ai/v1", ("MOONSHOT_API_KEY",),
             reasoning_in_history=True),
    Provider("openrouter", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",)),
    Provider("ollama", "http://localhost:11434/v1", (), needs_key=False),
    Provider("llamacpp", "http://localhost:8080/v1", (), needs_key=False),
    Provider("groq", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",)),
    Provider("together", "https://api.together.ai/v1", ("TOGETHER_API_KEY",)),
    Provider("mistral", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",)),
    Provider("gemini", "https://generativelanguage.googleapis.com/v1beta/openai/",
             ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    # offline: `-m mock/script.json` plays a script file (a JSON list of turns) as the model
    Provider("mock", None, (), needs_key=False),
    # `-m litellm/anthropic/claude-sonnet-4-5` (or CORECODER_PROVIDER=litellm): LiteLLM's name,
    # for a provider with no OpenAI-compatible endpoint; LiteLLM finds the provider's own key
    Provider("litellm", None, (), needs_key=False),
)})
BACKENDS = ("openai", "litellm")  # CORECODER_PROVIDER: the official client (default), or LiteLLM

DEFAULT_MODEL = "gpt-4o-mini"
# The settings that choose where the conversation goes and with which key.
ROUTES = frozenset({"CORECODER_BASE_URL", "OPENAI_BASE_URL", "CORECODER_API_KEY", "OPENAI_API_KEY",
                    "CORECODER_PROVIDER",
                    *(name for p in PROVIDERS.values() for name in p.key_env)})
NO_KEY = "not-needed"  # what keyless local servers get: the openai client refuses an empty key


@dataclass
class Config:
    model: str  # the name the provider knows it by: "deepseek-chat", "anthropic/claude-sonnet-4.5"
    provider: Provider
    base_url: str | None
    api_key: str | None
    home: Path  # where sessions and pricing.json live; created by whoever first writes there
    context_window: int | None = None
    stream: bool = True  # CORECODER_STREAM=0 for a server that can't stream
    notes: tuple[str, ...] = ()  # what the user should know about these settings
    idle_timeout: float | None = None  # seconds; None: the client's default (llm.IDLE_TIMEOUT)
    reply_timeout: float | None = None  # seconds for a whole reply (llm.REPLY_TIMEOUT)
    max_tokens: int | None = None  # of a reply; None: not sent (the provider's default)
    temperature: float | None = None  # None: not sent
    compact_at: float | None = None  # the share of the window where compaction starts (0.8)

    @property
    def label(self) -> str:
        """The full name, as a user would type it back: "deepseek/deepseek-chat"."""
        return f"{self.provider.name}/{self.model}"


def parse_model(spec: str) -> tuple[Provider | None, str]:
    """Split "provider/model". Only a known provider counts, so "anthropic/claude-3.5-sonnet"
    stays whole (a name on some server) and "openrouter/anthropic/..." keeps its inner slash."""
    head, sep, rest = spec.partition("/")
    provider = PROVIDERS.get(head.lower()) if sep else None
    return (provider, rest) if provider else (None, spec)


_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


def read_dotenv(path: Path) -> dict[str, str]:
    """Parse a .env file: KEY=VALUE, `export KEY=...`, quotes, comments. A missing
    file is no settings; a line we can't read is skipped, not fatal."""
    try:
        text = read_regular(path, CONFIG_LIMIT).decode("utf-8-sig", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return {}
    except NotARegularFile:
        return {}
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None
    values = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            values[match.group(1)] = _value(match.group(2))
    return values


def _value(raw: str) -> str:
    raw = raw.strip()
    if raw[:1] in ("'", '"'):
        end = raw.find(raw[0], 1)
        if end > 0:  # anything after the closing quote (a comment) is dropped
            return raw[1:end]
    # An unquoted value ends at " #": "a#b" is a value, "a # note" is a value and a comment.
    return re.split(r"\s+#", raw, maxsplit=1)[0].strip()


def find_dotenv(cwd: Path) -> Path | None:
    """The nearest .env from cwd up to the git root. Outside a repository only cwd is
    searched, so a stray ~/.env never configures a project by accident."""
    dirs = [cwd, *cwd.parents]
    root = git_root(cwd)
    search = dirs[: dirs.index(root) + 1] if root else [cwd]
    return next((d / ".env" for d in search if (d / ".env").is_file()), None)


def load_config(cwd: Path, env: Mapping[str, str] = os.environ, model: str | None = None, *,
                project_routes: bool = True) -> Config:
    """Resolve the model, provider, endpoint, key and home from `model`, then the
    environment, then the nearest .env (without its ROUTES unless `project_routes`). Does
    not check the key: see `require_key`."""
    cwd = Path(cwd).resolve()
    dotenv_path = find_dotenv(cwd)
    project = read_dotenv(dotenv_path) if dotenv_path else {}
    if not project_routes:  # (a mock model is a file of the project's playing the model: a route)
        project = {name: value for name, value in project.items() if name not in ROUTES
                   and not (name == "CORECODER_MODEL" and value.lower().startswith("mock/"))}
    settings = {**project, **env}
    provider, name = parse_model(model_spec(model, settings))
    if not name:
        raise ConfigError(f"the model name after {provider.name}/ is empty; "
                          "set CORECODER_MODEL or --model")
    endpoints = ("CORECODER_BASE_URL", "OPENAI_BASE_URL")
    override, notes = _endpoint(endpoints, env, project, dotenv_path)
    provider = provider or PROVIDERS["openai"]  # with an override: any OpenAI-compatible server
    projects_endpoint = bool(override) and not _get(env, *endpoints)
    # An endpoint the project chose gets a key from the project's file, or none at all.
    api_key = _api_key([project] if projects_endpoint else [env, project], provider, override)
    if projects_endpoint:
        api_key = api_key or NO_KEY
        names = ("CORECODER_API_KEY", *provider.key_env, "OPENAI_API_KEY")
        if _get(env, *names) and not _get(project, *names):
            notes.append(f"{dotenv_path} sets the endpoint {override}, so no API key from "
                         "your environment is sent there: put the key it needs in that file, or "
                         "set the endpoint in your environment")
    if _get(project, "CORECODER_HOME"):
        notes.append(f"{dotenv_path} sets CORECODER_HOME, which only the environment may set: "
                     "ignored")
    return Config(
        model=name,
        provider=provider,
        base_url=override or provider.base_url,
        api_key=api_key,
        home=_home(env),
        context_window=_positive(settings, "CORECODER_CONTEXT_WINDOW", int, "tokens"),
        idle_timeout=_positive(settings, "CORECODER_IDLE_TIMEOUT", float, "seconds"),
        reply_timeout=_positive(settings, "CORECODER_REPLY_TIMEOUT", float, "seconds"),
        max_tokens=_positive(settings, "CORECODER_MAX_TOKENS", int, "tokens"),
        temperature=_between(settings, "CORECODER_TEMPERATURE", 0, 2, "a temperature"),
        compact_at=_between(settings, "CORECODER_COMPACT_AT", 0.1, 0.95, "a share of the window"),
        stream=(provider.stream
                and _get(settings, "CORECODER_STREAM") not in ("0", "false", "no", "off")),
        notes=tuple(notes),
    )


def model_spec(model: str | None, settings: Mapping[str, str]) -> str:
    """The model asked for (`model`, else CORECODER_MODEL, else the default), as the backend
    CORECODER_PROVIDER names has it: with `litellm`, the whole name is LiteLLM's
    ("anthropic/claude-sonnet-4-5" included), so it goes through the litellm/ provider."""
    spec = model or _get(settings, "CORECODER_MODEL") or DEFAULT_MODEL
    backend = (_get(settings, "CORECODER_PROVIDER") or "openai").lower()
    if backend not in BACKENDS:
        raise ConfigError(f"CORECODER_PROVIDER={backend}: not a backend; use one of "
                          f"{', '.join(BACKENDS)} (openai: any OpenAI-compatible server)")
    if backend == "litellm" and not spec.lower().startswith(("litellm/", "mock/")):
        return f"litellm/{spec}"
    return spec


def _get(settings: Mapping[str, str], *names: str) -> str | None:
    """The first of `names` that is set to something; an empty value counts as unset."""
    return next((settings[n] for n in names if settings.get(n)), None)


def _api_key(sources: list[Mapping[str, str]], provider: Provider, endpoint: str | None
             ) -> str | None:
    # OPENAI_API_KEY is the generic key only when the user also chose the endpoint:
    # falling back to it for a preset would send an OpenAI key to someone else's server.
    fallback = ("OPENAI_API_KEY",) if endpoint else ()
    # The first source with a key gives it: the user's environment before the project's file.
    names = ("CORECODER_API_KEY", *provider.key_env, *fallback)
    key = next((key for source in sources if (key := _get(source, *names))), None)
    # A server on this machine (Ollama, llama.cpp, vLLM...) rarely wants a key: don't demand one.
    keyless = not provider.needs_key or _on_this_machine(endpoint)
    return key or (NO_KEY if keyless else None)


def _endpoint(names: tuple[str, ...], env: Mapping[str, str], project: Mapping[str, str],
              dotenv_path: Path | None) -> tuple[str | None, list[str]]:
    """The endpoint the environment sets, else the project's .env, and what to tell the user of
    it. One that is no http:// or https:// address is caught here, before any request: the
    client would take localhost:11434/v1 (whose scheme is "localhost") for a server it cannot
    reach, and retry it as a connection error until it gave up. The environment's is the
    user's own: an error that names it. The project's is ignored, with a note: a cloned
    project's .env must not keep the command from starting."""
    if name := next((n for n in names if env.get(n)), None):
        if not _is_address(env[name]):
            raise ConfigError(f"{name} must be an http:// or https:// address, such as "
                              f"http://localhost:11434/v1, got {env[name]!r}")
        return env[name], []
    if name := next((n for n in names if project.get(n)), None):
        if not _is_address(project[name]):
            return None, [f"{dotenv_path} sets {name} to {project[name]!r}, which is no http:// "
                          "or https:// address: ignored"]
        return project[name], []
    return None, []


def _is_address(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return (parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
                and (parts.port is None or parts.port > 0))
    except ValueError:  # an unclosed [IPv6 bracket, a port that is not a number
        return False


def _on_this_machine(url: str | None) -> bool:
    host = urlsplit(url).hostname if url else None
    return host in ("localhost", "::1") or (host or "").startswith("127.")


def _home(settings: Mapping[str, str]) -> Path:
    if home := _get(settings, "CORECODER_HOME"):
        return Path(home).expanduser()
    user_home = _get(settings, "HOME")  # from `env`, so a test's env decides, not the machine's
    return (Path(user_home) if user_home else Path.home()) / ".corecoder"


def _positive(settings: Mapping[str, str], name: str, kind: type, unit: str):
    """The setting `name` as a positive int or float, None when unset; ConfigError otherwise."""
    raw = _get(settings, name)
    if raw is None:
        return None
    try:
        value = kind(raw.replace("_", "").replace(",", ""))
    except ValueError:
        value = 0
    if not 0 < value < float("inf"):
        raise ConfigError(f"{name} must be a positive number of {unit}, got {raw!r}")
    return value


def _between(settings: Mapping[str, str], name: str, low: float, high: float,
             what: str) -> float | None:
    """The setting `name` as a number from `low` to `high` (a share may be written 80%), None
    when unset; ConfigError otherwise."""
    raw = _get(settings, name)
    if raw is None:
        return None
    text = raw.strip()
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:
        raise ConfigError(f"{name} must be {what} from {low:g} to {high:g}, got {raw!r}")
    return value


def require_key(config: Config) -> None:
    """Fail before the first request, with the variables to set, rather than with a 401."""
    provider = config.provider
    if not provider.needs_key or config.api_key:
        return
    names = " or ".join(provider.key_env or ("OPENAI_API_KEY",))
    raise ConfigError(
        f"no API key for {config.label}: set {names} (or CORECODER_API_KEY), "
        "in the environment or in .env. "
        "To try CoreCoder offline without a key, run `corecoder --demo`."
    )
