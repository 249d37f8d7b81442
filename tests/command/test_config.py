"""Configuration: which model, which endpoint, which key. Every test passes `env=`
and a temporary home, so nothing here reads the real environment or ~/.corecoder."""

from __future__ import annotations

import pytest

from corecoder.cli.config import (
    NO_KEY,
    PROVIDERS,
    ConfigError,
    find_dotenv,
    load_config,
    parse_model,
    read_dotenv,
    require_key,
)


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def repo(tmp_path):
    """A project: a git root with a subdirectory to run from."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "pkg").mkdir(parents=True)
    return root


def load(cwd, home, model=None, **env):
    return load_config(cwd, env={"CORECODER_HOME": str(home), **env}, model=model)


# --- naming a model --------------------------------------------------------------


def test_parse_model_splits_a_known_provider_prefix():
    assert parse_model("deepseek/deepseek-chat") == (PROVIDERS["deepseek"], "deepseek-chat")


def test_parse_model_keeps_the_rest_of_a_nested_openrouter_name():
    provider, name = parse_model("openrouter/anthropic/claude-3.5-sonnet")
    assert provider is PROVIDERS["openrouter"] and name == "anthropic/claude-3.5-sonnet"


def test_parse_model_without_a_prefix_has_no_provider():
    assert parse_model("gpt-4o-mini") == (None, "gpt-4o-mini")


def test_only_a_known_provider_name_counts_as_a_prefix():
    assert parse_model("anthropic/claude-3.5-sonnet") == (None, "anthropic/claude-3.5-sonnet")
    assert parse_model("DeepSeek/deepseek-flash") == (PROVIDERS["deepseek"], "deepseek-flash")


def test_the_label_is_provider_slash_model(tmp_path, home):
    config = load(tmp_path, home, model="openrouter/anthropic/claude-sonnet-4.5", OPENROUTER_API_KEY="k")
    assert config.model == "anthropic/claude-sonnet-4.5"
    assert config.label == "openrouter/anthropic/claude-sonnet-4.5"


def test_an_empty_model_name_after_the_prefix_is_an_error(tmp_path, home):
    with pytest.raises(ConfigError, match="empty"):
        load(tmp_path, home, model="deepseek/")


# --- precedence: argument > environment > .env > default ---------------------------


def test_the_default_is_gpt_4o_mini_on_openai(tmp_path, home):
    config = load(tmp_path, home)
    assert (config.provider.name, config.model, config.base_url) == ("openai", "gpt-4o-mini", None)


def test_dotenv_beats_the_default(tmp_path, home):
    (tmp_path / ".env").write_text("CORECODER_MODEL=kimi/kimi-k3\n")
    assert load(tmp_path, home).label == "kimi/kimi-k3"


def test_the_environment_beats_dotenv(tmp_path, home):
    (tmp_path / ".env").write_text("CORECODER_MODEL=kimi/kimi-k3\nDEEPSEEK_API_KEY=from-file\n")
    config = load(tmp_path, home, CORECODER_MODEL="deepseek/deepseek-flash", DEEPSEEK_API_KEY="from-env")
    assert config.label == "deepseek/deepseek-flash"
    assert config.api_key == "from-env"


def test_the_model_argument_beats_everything(tmp_path, home):
    (tmp_path / ".env").write_text("CORECODER_MODEL=kimi/kimi-k3\n")
    config = load(tmp_path, home, model="groq/llama-3.3-70b-versatile", CORECODER_MODEL="deepseek/x")
    assert config.label == "groq/llama-3.3-70b-versatile"


def test_dotenv_is_found_in_a_parent_up_to_the_git_root(repo, home):
    (repo / ".env").write_text("CORECODER_MODEL=mistral/mistral-large-latest\n")
    assert load(repo / "src" / "pkg", home).label == "mistral/mistral-large-latest"
    assert find_dotenv(repo / "src" / "pkg") == repo / ".env"


def test_the_nearest_dotenv_wins(repo, home):
    (repo / ".env").write_text("CORECODER_MODEL=mistral/far\n")
    (repo / "src" / ".env").write_text("CORECODER_MODEL=mistral/near\n")
    assert load(repo / "src" / "pkg", home).model == "near"


def test_dotenv_above_the_git_root_is_ignored(repo, home):
    (repo.parent / ".env").write_text("CORECODER_MODEL=mistral/outside\n")
    assert load(repo / "src", home).model == "gpt-4o-mini"


def test_outside_a_repository_only_cwd_is_searched(tmp_path, home):
    (tmp_path / ".env").write_text("CORECODER_MODEL=mistral/outside\n")
    (tmp_path / "sub").mkdir()
    assert find_dotenv(tmp_path / "sub") is None
    assert load(tmp_path / "sub", home).model == "gpt-4o-mini"


# --- the .env parser ---------------------------------------------------------------


def test_read_dotenv_handles_the_usual_forms(tmp_path):
    path = tmp_path / ".env"
    path.write_text(
        "# a comment\n"
        "\n"
        "PLAIN=value\n"
        "export EXPORTED=yes\n"
        "  SPACED  =  padded value  \n"
        "DOUBLE=\"two words\"\n"
        "SINGLE='it''s'\n"
        "EMPTY=\n"
        "URL=http://host:8080/v1?a=b\n"
    )
    assert read_dotenv(path) == {
        "PLAIN": "value", "EXPORTED": "yes", "SPACED": "padded value", "DOUBLE": "two words",
        "SINGLE": "it", "EMPTY": "", "URL": "http://host:8080/v1?a=b",
    }


def test_read_dotenv_drops_inline_comments_but_keeps_hashes_inside_values(tmp_path):
    path = tmp_path / ".env"
    path.write_text(
        "A=value # a note\n"
        "B=pass#word\n"
        "C=\"keep # this\" # but not this\n"
        "D='x#y'\n"
    )
    assert read_dotenv(path) == {"A": "value", "B": "pass#word", "C": "keep # this", "D": "x#y"}


def test_read_dotenv_skips_malformed_lines(tmp_path):
    path = tmp_path / ".env"
    path.write_text("no equals sign\n=novalue\n1BAD=x\nBAD-NAME=x\nGOOD=1\nexport\n")
    assert read_dotenv(path) == {"GOOD": "1"}


def test_read_dotenv_reads_crlf_a_bom_and_lets_the_last_duplicate_win(tmp_path):
    path = tmp_path / ".env"
    path.write_bytes("\ufeffKEY=first\r\nKEY=second\r\nOTHER=1\r\n".encode())
    assert read_dotenv(path) == {"KEY": "second", "OTHER": "1"}


def test_read_dotenv_of_a_missing_file_or_a_directory_is_empty(tmp_path):
    assert read_dotenv(tmp_path / "nope.env") == {}
    assert read_dotenv(tmp_path) == {}


# --- keys --------------------------------------------------------------------------


def test_corecoder_api_key_beats_the_providers_own_key(tmp_path, home):
    config = load(tmp_path, home, model="deepseek/deepseek-flash", CORECODER_API_KEY="cc", DEEPSEEK_API_KEY="ds")
    assert config.api_key == "cc"


def test_the_providers_key_variables_are_tried_in_order(tmp_path, home):
    both = load(tmp_path, home, model="gemini/gemini-2.5-flash", GEMINI_API_KEY="g1", GOOGLE_API_KEY="g2")
    second = load(tmp_path, home, model="gemini/gemini-2.5-flash", GOOGLE_API_KEY="g2")
    assert (both.api_key, second.api_key) == ("g1", "g2")


def test_the_providers_key_beats_openai_api_key(tmp_path, home):
    config = load(tmp_path, home, model="deepseek/deepseek-flash", DEEPSEEK_API_KEY="ds", OPENAI_API_KEY="oa",
                  OPENAI_BASE_URL="https://proxy.example/v1")
    assert config.api_key == "ds"


def test_openai_api_key_is_the_fallback_for_a_server_the_user_chose(tmp_path, home):
    config = load(tmp_path, home, model="deepseek/deepseek-flash", OPENAI_API_KEY="oa",
                  OPENAI_BASE_URL="https://proxy.example/v1")
    assert config.api_key == "oa"


def test_an_openai_key_is_never_sent_to_another_providers_preset(tmp_path, home):
    config = load(tmp_path, home, model="deepseek/deepseek-flash", OPENAI_API_KEY="oa")
    assert config.api_key is None
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY"):
        require_key(config)


def test_an_empty_variable_counts_as_unset(tmp_path, home):
    config = load(tmp_path, home, model="deepseek/deepseek-flash", CORECODER_API_KEY="", DEEPSEEK_API_KEY="ds")
    assert config.api_key == "ds"


def test_a_key_in_dotenv_is_used(tmp_path, home):
    (tmp_path / ".env").write_text("export OPENROUTER_API_KEY='sk-or-123'\n")
    assert load(tmp_path, home, model="openrouter/openai/gpt-4o").api_key == "sk-or-123"


def test_a_missing_key_names_the_variables_and_the_offline_demo(tmp_path, home):
    config = load(tmp_path, home, model="deepseek/deepseek-flash")
    with pytest.raises(ConfigError) as error:
        require_key(config)
    message = str(error.value)
    assert "DEEPSEEK_API_KEY" in message and "CORECODER_API_KEY" in message
    assert ".env" in message and "corecoder --demo" in message


def test_a_missing_key_for_a_two_variable_provider_names_both(tmp_path, home):
    with pytest.raises(ConfigError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        require_key(load(tmp_path, home, model="gemini/gemini-2.5-flash"))


def test_require_key_passes_when_a_key_is_set(tmp_path, home):
    require_key(load(tmp_path, home, OPENAI_API_KEY="sk-1"))


@pytest.mark.parametrize("name, url", [("ollama", "http://localhost:11434/v1"),
                                       ("llamacpp", "http://localhost:8080/v1")])
def test_local_providers_need_no_key_and_get_a_placeholder(tmp_path, home, name, url):
    config = load(tmp_path, home, model=f"{name}/qwen3:8b")
    assert (config.base_url, config.api_key) == (url, NO_KEY)
    require_key(config)


def test_a_local_provider_still_uses_a_key_when_one_is_given(tmp_path, home):
    assert load(tmp_path, home, model="ollama/llama3.1", CORECODER_API_KEY="secret").api_key == "secret"


# --- endpoints ---------------------------------------------------------------------


def test_a_preset_brings_its_documented_base_url(tmp_path, home):
    assert load(tmp_path, home, model="kimi/kimi-k3").base_url == "https://api.moonshot.ai/v1"
    assert load(tmp_path, home, model="openrouter/x/y").base_url == "https://openrouter.ai/api/v1"


def test_openai_base_url_without_a_prefix_means_any_compatible_server(tmp_path, home):
    config = load(tmp_path, home, model="my-local-model", OPENAI_BASE_URL="http://box:9000/v1", OPENAI_API_KEY="k")
    assert (config.provider.name, config.model, config.base_url) == ("openai", "my-local-model", "http://box:9000/v1")


def test_openai_base_url_overrides_a_preset(tmp_path, home):
    config = load(tmp_path, home, model="deepseek/deepseek-flash", OPENAI_BASE_URL="https://proxy.example/v1")
    assert config.provider.name == "deepseek" and config.base_url == "https://proxy.example/v1"


def test_corecoder_base_url_beats_openai_base_url(tmp_path, home):
    config = load(tmp_path, home, CORECODER_BASE_URL="http://ours/v1", OPENAI_BASE_URL="http://theirs/v1")
    assert config.base_url == "http://ours/v1"


def test_base_url_can_come_from_dotenv(tmp_path, home):
    (tmp_path / ".env").write_text('OPENAI_BASE_URL="http://127.0.0.1:8000/v1"\n')
    assert load(tmp_path, home).base_url == "http://127.0.0.1:8000/v1"


def test_an_endpoint_the_projects_env_names_never_gets_the_environments_key(tmp_path, home):
    (tmp_path / ".env").write_text("OPENAI_BASE_URL=https://collector.example/v1\n")
    config = load(tmp_path, home, OPENAI_API_KEY="sk-users")
    assert config.base_url == "https://collector.example/v1" and config.api_key == NO_KEY
    assert config.notes == (f"{tmp_path / '.env'} sets the endpoint https://collector.example/v1, "
                            "so no API key from your environment is sent there: put the key it "
                            "needs in that file, or set the endpoint in your environment",)


def test_the_projects_endpoint_gets_the_projects_own_key(tmp_path, home):
    (tmp_path / ".env").write_text("OPENAI_BASE_URL=https://proxy.example/v1\nOPENAI_API_KEY=team\n")
    config = load(tmp_path, home, OPENAI_API_KEY="sk-users")
    assert config.api_key == "team" and config.notes == ()


def test_the_environments_endpoint_beats_the_projects_whatever_its_name(tmp_path, home):
    (tmp_path / ".env").write_text("CORECODER_BASE_URL=https://collector.example/v1\n")
    config = load(tmp_path, home, OPENAI_BASE_URL="http://ours/v1", OPENAI_API_KEY="sk-users")
    assert (config.base_url, config.api_key, config.notes) == ("http://ours/v1", "sk-users", ())


@pytest.mark.parametrize("url", ["http://box:9000/v1", "HTTPS://api.example/v1", "http://[::1]:8000"])
def test_an_endpoint_is_any_http_or_https_address(tmp_path, home, url):
    assert load(tmp_path, home, CORECODER_BASE_URL=url).base_url == url


@pytest.mark.parametrize("url", ["localhost:11434/v1", "api.example/v1", "ftp://x/v1", "http://",
                                 "http://[::1", "http://box:port/v1",
                                 "http://box:0/v1"])
def test_an_endpoint_of_the_users_that_is_no_address_is_refused_naming_its_variable(
        tmp_path, home, url):
    with pytest.raises(ConfigError) as error:
        load(tmp_path, home, OPENAI_BASE_URL=url)
    assert str(error.value) == ("OPENAI_BASE_URL must be an http:// or https:// address, such as "
                                f"http://localhost:11434/v1, got {url!r}")


def test_an_endpoint_of_the_projects_that_is_no_address_is_ignored_with_a_note(tmp_path, home):
    """A cloned project's .env must not keep the command from starting."""
    (tmp_path / ".env").write_text("CORECODER_BASE_URL=localhost:11434/v1\n")
    config = load(tmp_path, home, OPENAI_API_KEY="sk-users")
    assert (config.base_url, config.api_key) == (None, "sk-users")  # the user's own: OpenAI's
    assert config.notes == (f"{tmp_path / '.env'} sets CORECODER_BASE_URL to "
                            "'localhost:11434/v1', which is no http:// or https:// address: "
                            "ignored",)


def test_a_projects_env_cannot_move_the_config_dir(tmp_path, home):
    (tmp_path / ".env").write_text(f"CORECODER_HOME={tmp_path / 'planted'}\n")
    config = load(tmp_path, home)
    assert config.home == home and "sets CORECODER_HOME" in config.notes[0]


# --- home and context window ---------------------------------------------------------


def test_corecoder_home_is_used_and_not_created(tmp_path):
    config = load_config(tmp_path, env={"CORECODER_HOME": str(tmp_path / "cc")})
    assert config.home == tmp_path / "cc" and not config.home.exists()


def test_home_defaults_to_dot_corecoder_under_the_users_home(tmp_path):
    assert load_config(tmp_path, env={"HOME": str(tmp_path)}).home == tmp_path / ".corecoder"


def test_context_window_is_read_when_set(tmp_path, home):
    assert load(tmp_path, home).context_window is None
    assert load(tmp_path, home, CORECODER_CONTEXT_WINDOW="128000").context_window == 128_000
    assert load(tmp_path, home, CORECODER_CONTEXT_WINDOW="1_000_000").context_window == 1_000_000


@pytest.mark.parametrize("raw", ["lots", "0", "-5", "1.5"])
def test_a_bad_context_window_names_the_variable(tmp_path, home, raw):
    with pytest.raises(ConfigError, match="CORECODER_CONTEXT_WINDOW"):
        load(tmp_path, home, CORECODER_CONTEXT_WINDOW=raw)


def test_max_tokens_temperature_and_where_compaction_starts_are_read_only_when_set(tmp_path, home):
    unset = load(tmp_path, home)
    assert (unset.max_tokens, unset.temperature, unset.compact_at) == (None, None, None)
    config = load(tmp_path, home, CORECODER_MAX_TOKENS="4_096", CORECODER_TEMPERATURE="0",
                  CORECODER_COMPACT_AT="70%")
    assert (config.max_tokens, config.temperature, config.compact_at) == (4_096, 0.0, 0.7)
    assert load(tmp_path, home, CORECODER_COMPACT_AT="0.6").compact_at == 0.6


@pytest.mark.parametrize("name, raw", [("CORECODER_MAX_TOKENS", "many"), ("CORECODER_MAX_TOKENS", "0"),
                                       ("CORECODER_TEMPERATURE", "hot"), ("CORECODER_TEMPERATURE", "2.5"),
                                       ("CORECODER_TEMPERATURE", "-0.1"), ("CORECODER_TEMPERATURE", "nan"),
                                       ("CORECODER_COMPACT_AT", "1"), ("CORECODER_COMPACT_AT", "99%"),
                                       ("CORECODER_COMPACT_AT", "0.05"), ("CORECODER_COMPACT_AT", "late")])
def test_a_bad_setting_names_the_variable_and_what_it_must_be(tmp_path, home, name, raw):
    with pytest.raises(ConfigError, match=f"{name} must be .*, got {raw!r}"):
        load(tmp_path, home, **{name: raw})


# --- the preset table ----------------------------------------------------------------


def test_the_preset_table_is_read_only():
    with pytest.raises(TypeError):
        PROVIDERS["mine"] = PROVIDERS["openai"]


def test_every_preset_that_needs_a_key_names_one_and_remote_ones_use_https():
    assert set(PROVIDERS) == {"openai", "deepseek", "qwen", "kimi", "openrouter", "ollama", "llamacpp",
                              "groq", "together", "mistral", "gemini", "mock", "litellm"}
    for name, provider in PROVIDERS.items():
        assert provider.name == name
        assert provider.key_env or not provider.needs_key
        if provider.needs_key and provider.base_url:
            assert provider.base_url.startswith("https://")


def test_deepseek_and_kimi_keep_reasoning_on_tool_call_turns():
    keep = {name for name, p in PROVIDERS.items() if p.reasoning_in_history}
    assert keep == {"deepseek", "kimi"}


def test_streaming_can_be_switched_off_for_a_server_that_cannot_stream(tmp_path):
    env = {"OPENAI_API_KEY": "x", "HOME": str(tmp_path)}
    assert load_config(tmp_path, env).stream is True
    assert load_config(tmp_path, {**env, "CORECODER_STREAM": "0"}).stream is False


def test_a_server_on_this_machine_needs_no_key(tmp_path):
    env = {"HOME": str(tmp_path), "OPENAI_BASE_URL": "http://localhost:11434/v1"}
    config = load_config(tmp_path, env, model="qwen3")
    require_key(config)  # no error: Ollama and friends take any key
    assert config.api_key == "not-needed" and config.base_url == "http://localhost:11434/v1"
    remote = load_config(tmp_path, {**env, "OPENAI_BASE_URL": "https://api.example.com/v1"}, model="m")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        require_key(remote)


def test_with_litellm_as_the_backend_the_whole_name_is_litellms_and_the_project_cannot_choose_it(
        tmp_path):
    env = {"HOME": str(tmp_path), "CORECODER_PROVIDER": "LiteLLM"}
    for model, label in [("anthropic/claude-sonnet-4-5", "litellm/anthropic/claude-sonnet-4-5"),
                         ("deepseek/deepseek-chat", "litellm/deepseek/deepseek-chat"),
                         ("litellm/gpt-4o", "litellm/gpt-4o"), ("mock/s.json", "mock/s.json")]:
        assert load_config(tmp_path, env, model=model).label == label
    assert load_config(tmp_path, {"HOME": str(tmp_path)}).provider.name == "openai"
    (tmp_path / ".env").write_text("CORECODER_PROVIDER=litellm\n")
    assert load_config(tmp_path, {"HOME": str(tmp_path)}, project_routes=False).label == (
        "openai/gpt-4o-mini")  # a route: the project's only once it is trusted
    with pytest.raises(ConfigError, match="CORECODER_PROVIDER=bedrock: not a backend"):
        load_config(tmp_path, {"HOME": str(tmp_path), "CORECODER_PROVIDER": "bedrock"})
