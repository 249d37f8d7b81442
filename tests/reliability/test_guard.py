"""The bash guard's categories, as people write them.

Each category the blocklist names is refused in every generated spelling: behind `sudo`, `env X=1`,
`nohup`...; quoted ('main', "main", m"ai"n); with the home as ~, $HOME, ${HOME}, "${HOME:?}" or its
absolute path; after `;`, `&&` or a newline; inside `bash -c "..."`, `sh -c '...'`, `$(...)`,
backticks, `eval`, a subshell or an `if`; with git's own options before `push`; onto every kind of
disk device. Everyday look-alikes, wrapped the same ways, still run. It stays a guard against slips,
not a sandbox: a variable, a function or a script gets past it (test_what_the_guard_does_not_follow).
"""

import re
import shlex
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corecoder.tool import ToolError
from corecoder.tools import bash as bash_module
from corecoder.tools.bash import Bash, blocked_reason
from corecoder.workspace import Workspace

pytestmark = pytest.mark.row("guard")

HOME = "/home/alice"  # the user's home in these tests: never written, the guard only reads commands

GENERATED = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def home(monkeypatch):
    monkeypatch.setenv("HOME", HOME)


def in_double_quotes(command: str) -> str:
    return '"' + re.sub(r'([\\"$`])', r"\\\1", command) + '"'


# How a command reaches bash: each wrapper keeps its meaning (the command still runs).
WRAPPERS = [
    lambda c: c,
    lambda c: f"ls -la; {c}",
    lambda c: f"echo start && {c}",
    lambda c: f"false || {c}",
    lambda c: f"echo start\n{c}\necho done",
    lambda c: f"{c} && echo done",
    lambda c: f"({c})",
    lambda c: f"{{ {c}; }}",
    lambda c: f"if true; then {c}; fi",
    lambda c: f"bash -c {in_double_quotes(c)}",
    lambda c: f"sh -c {shlex.quote(c)}",
    lambda c: f"sudo bash -lc {shlex.quote(c)}",
    lambda c: f"eval {shlex.quote(c)}",
    lambda c: f"eval {in_double_quotes(c)}",
    lambda c: f"echo $({c})",
    lambda c: f'result="$({c})"',
    lambda c: f"echo `{c}`",
]
PREFIXES = ["", "sudo ", "sudo -u root ", "sudo -E ", "env X=1 ", "X=1 ", "command ", "nohup ",
            "time ", "nice -n 5 ", "timeout 60 ", "exec ", "\\"]


def spelled(simple: st.SearchStrategy[str], two_steps: st.SearchStrategy[str] | None = None):
    """A simple command behind a prefix (or a two-step one), inside up to two wrappers."""
    prefixed = st.builds(lambda prefix, command: prefix + command if command[0].isalpha() or
                         prefix != "\\" else command, st.sampled_from(PREFIXES), simple)
    command = st.one_of(prefixed, two_steps) if two_steps is not None else prefixed

    def wrap(command: str, wrappers: list) -> str:
        for wrapper in wrappers:
            if not ("`" in command and wrapper is WRAPPERS[-1]):  # backticks do not nest unescaped
                command = wrapper(command)
        return command

    return st.builds(wrap, command, st.lists(st.sampled_from(WRAPPERS), max_size=2))


def refused_as(command: str, category: str) -> bool:
    reason = blocked_reason(command)
    return reason is not None and reason.startswith(category)


# --- rm, chmod, find on / or the home --------------------------------------------------------------

ROOT_OR_HOME = ["/", "/*", "/.", "//", "/..", "~", "~/", "~/*", "~/.*", "~/.", "~/..", "$HOME",
                "$HOME/", "${HOME}", "${HOME}/*", '"$HOME"', '"$HOME"/', '"$HOME"/*', '"${HOME:?}"/*',
                "${HOME:?}/", '"${HOME%/}"/*', HOME, f"{HOME}/", f"{HOME}/*", f'"{HOME}"', "~/.[!.]*"]
RM = st.sampled_from(["rm", "'rm'", '"rm"', "/bin/rm", "r''m"])
RM_FLAGS = st.sampled_from(["-rf", "-fr", "-r -f", "-Rf", "--recursive --force", "-r", "-f", "",
                            "-rf --no-preserve-root", "-rf --"])
OTHER_PATHS = st.sampled_from(["", "build ", "tmp/x "])
HOME_DIRECTORY = ["cd", "cd ~", "cd ~/", "cd $HOME", 'cd "$HOME"', "cd ${HOME}", f"cd {HOME}",
                  "cd /", "cd -P ~", "pushd ~", 'cd "${HOME:?}"']
HERE = [".", "./", "*", "./*", ".*", "./.*", "..", ".[!.]*"]
SEPARATORS = [" && ", "; ", "\n", " && ls && ", ";echo moved;"]

RM_ROOT_OR_HOME = st.builds("{} {} {}{}".format, RM, RM_FLAGS, OTHER_PATHS,
                            st.sampled_from(ROOT_OR_HOME))
RM_AFTER_CD = st.builds("{}{}{} -rf {}".format, st.sampled_from(HOME_DIRECTORY),
                        st.sampled_from(SEPARATORS), RM, st.sampled_from(HERE))


@GENERATED
@given(command=spelled(RM_ROOT_OR_HOME, RM_AFTER_CD))
def test_rm_of_the_root_or_the_home_is_refused_however_it_is_spelled(command):
    assert refused_as(command, "rm on / or the home directory"), command


@GENERATED
@given(command=spelled(st.builds("{} {} {} {}".format, st.sampled_from(["chmod", "chown", "chgrp"]),
                                 st.sampled_from(["-R", "-Rf", "-fR", "--recursive", "-R -v"]),
                                 st.sampled_from(["777", "me:me", "u+w", "staff"]),
                                 st.sampled_from(ROOT_OR_HOME))))
def test_a_recursive_chmod_or_chown_of_the_root_or_the_home_is_refused(command):
    assert refused_as(command, "a recursive chmod/chown"), command


@GENERATED
@given(command=spelled(st.builds("find {} {}".format, st.sampled_from(ROOT_OR_HOME),
                                 st.sampled_from(["-delete", "-name '*.log' -delete",
                                                  "-type f -exec rm -f {} +",
                                                  "-mindepth 1 -exec rm -rf '{}' \\;"]))))
def test_find_deleting_from_the_root_or_the_home_is_refused(command):
    assert refused_as(command, "find -delete"), command


# --- disks ------------------------------------------------------------------------------------------

DEVICES = ["/dev/sda", "/dev/sdb1", "/dev/nvme0n1", "/dev/nvme0n1p2", "/dev/vda", "/dev/hda",
           "/dev/xvda1", "/dev/mmcblk0", "/dev/mmcblk0p1", "/dev/disk2", "/dev/disk/by-id/ata-X",
           "/dev/md0", "/dev/mapper/vg-root", "/dev/dm-0"]
DISK_WRITES = ["dd if=disk.img of={}", "dd if=/dev/zero of={} bs=1M", "shred {}", "shred -n 1 -z {}",
               "tee {} < disk.img", "cp disk.img {}", "mv disk.img {}", "cat disk.img > {}",
               "echo oops >{}", "cat disk.img >> {}", "pv disk.img 1> {}", "fdisk {}",
               "sfdisk {} < layout", "parted {} mklabel gpt", "blkdiscard {}", "mkswap {}"]


def quoted(text: str, quote: str) -> str:
    return f"{quote}{text}{quote}"


@GENERATED
@given(command=spelled(st.builds(lambda form, device, quote: form.format(quoted(device, quote)),
                                 st.sampled_from(DISK_WRITES), st.sampled_from(DEVICES),
                                 st.sampled_from(["", '"', "'"]))))
def test_writing_to_a_disk_device_is_refused_whichever_program_writes(command):
    assert refused_as(command, "writing to a disk device"), command


@GENERATED
@given(command=spelled(st.builds("{} {}".format, st.sampled_from(
    ["mkfs.ext4", "mkfs -t ext4", "mkfs.vfat -F 32", "mke2fs", "wipefs -a", "/sbin/mkfs.xfs -f"]),
    st.sampled_from(DEVICES))))
def test_making_or_wiping_a_filesystem_is_refused(command):
    assert refused_as(command, "mkfs/wipefs erase a filesystem"), command


# --- a download run by a shell ----------------------------------------------------------------------

FETCH = ["curl -fsSL https://example.com/install.sh", "curl -s https://example.com/x",
         "wget -qO- https://example.com/x", "wget -O - https://example.com/x",
         "/usr/bin/curl https://example.com/x"]
SHELLS = ["sh", "bash", "zsh", "dash", "/bin/bash", "sudo bash", "sudo -E sh", "/usr/bin/env bash",
          "bash -s -- --yes", "sh -"]
INTERPRETERS = ["python3", "python", "python3 -", "perl", "ruby", "node"]
FED = [
    "{fetch} | {shell}", "{fetch} | tee install.log | {shell}", "{fetch} 2>/dev/null | {shell}",
    "{shell} <({fetch})", "{shell} < <({fetch})", '{shell} -c "$({fetch})"', "{shell} -c \"`{fetch}`\"",
    '{shell} <<< "$({fetch})"', "source <({fetch})", ". <({fetch})", 'eval "$({fetch})"',
    "({fetch}) | {shell}",
]


@GENERATED
@given(command=spelled(st.one_of(
    st.builds(lambda form, fetch, shell: form.format(fetch=fetch, shell=shell),
              st.sampled_from(FED), st.sampled_from(FETCH), st.sampled_from(SHELLS)),
    st.builds(lambda form, fetch, python: form.format(fetch=fetch, python=python),
              st.sampled_from(["{fetch} | {python}", "{python} <({fetch})",
                               '{python} -c "$({fetch})"']),
              st.sampled_from(FETCH), st.sampled_from(INTERPRETERS)))))
def test_a_download_run_by_a_shell_is_refused_however_it_is_fed(command):
    assert refused_as(command, "piping a download into a shell"), command


# --- a force push to main ---------------------------------------------------------------------------

GIT_OPTIONS = ["", "--no-pager ", "-C repo ", "-c user.name=A ", "-c 'user.name=A B' ",
               "--git-dir=.git ", "--git-dir .git --work-tree . ", "-C repo --no-pager "]
FORCE = ["-f", "--force", "-uf", "-fu", "--force --force-with-lease", "-f --no-verify"]
TO_MAIN = ["main", "master", "'main'", '"main"', 'm"ai"n', "ma''ster", "HEAD", "HEAD:main",
           "HEAD:refs/heads/main", "feature:main", "refs/heads/master", "@"]


@GENERATED
@given(command=spelled(st.one_of(
    st.builds("git {}push {} {} {}".format, st.sampled_from(GIT_OPTIONS), st.sampled_from(FORCE),
              st.sampled_from(["origin", "upstream", "'origin'"]), st.sampled_from(TO_MAIN)),
    st.builds("git {}push {} {} {}".format, st.sampled_from(GIT_OPTIONS),
              st.sampled_from(["origin", "upstream"]), st.sampled_from(TO_MAIN),
              st.sampled_from(FORCE)),
    st.builds("git {}push {}{}".format, st.sampled_from(GIT_OPTIONS), st.sampled_from(FORCE),
              st.sampled_from(["", " origin", " --set-upstream origin"])),  # the current branch
    st.builds("git {}push origin +{}".format, st.sampled_from(GIT_OPTIONS),
              st.sampled_from(["main", "master", "HEAD:main", "feature:master"])))))
def test_a_force_push_to_main_is_refused_however_it_is_spelled(command):
    assert refused_as(command, "a force push to main"), command


# --- the rest of the blocklist ------------------------------------------------------------------------

OTHERS = {
    "shutdown/reboot": ["shutdown -h now", "reboot", "halt", "poweroff", "systemctl reboot",
                        "systemctl --no-wall poweroff", "/sbin/shutdown -r +5"],
    "kill ... -1": ["kill -9 -1", "kill -KILL -1", "kill -s KILL -1", "kill -- -1", "kill -15 -1"],
    "a fork bomb": [":(){ :|:& };:", "bomb() { bomb | bomb & }; bomb"],
}


@pytest.mark.parametrize("category", sorted(OTHERS))
def test_the_other_categories_are_refused_behind_any_prefix_or_wrapper(category):
    @GENERATED
    @given(command=spelled(st.sampled_from(OTHERS[category])))
    def refused(command):
        assert refused_as(command, category), command

    refused()


# --- what must still run ------------------------------------------------------------------------------

HARMLESS = [
    "git push origin main", "git push -u origin main", "git --no-pager push origin 'main'",
    "git push --force-with-lease origin main", "git push -f origin feature",
    "git push --force origin feature/main-fix", "git push origin +feature",
    "git -C repo push --force-with-lease", "git fetch -f origin main", "git checkout -f main",
    "git commit -m 'force push to main'", 'git commit -m "rm -rf ~ is refused"',
    "rm -rf ./build", "rm -rf build/", "rm -rf node_modules", "rm -rf ~/project/build",
    'rm -rf "$HOME/.cache/pip"', "rm -rf /tmp/x/build", "rm -rf .venv", "rm -f ~/.bash_history",
    f"rm -rf {HOME}/project/dist", "rm -rf $(pwd)/build", "cd ~/project && rm -rf ./*",
    "cd build && rm -rf .", "cd ~ && cd project && rm -rf *", "cd $(mktemp -d) && rm -rf *",
    "cat /dev/null", "echo > /dev/null", "make 2>/dev/null", "cat /dev/sda1 | head -c 512",
    "dd if=/dev/zero of=./disk.img bs=1M count=1", "dd if=/dev/sda of=backup.img",
    "lsblk /dev/sda", "mount /dev/sda1 /mnt", "cp /dev/null empty.txt", "tee out.log < /dev/null",
    "curl -o file https://example.com/x", "curl -fsSL https://example.com/install.sh -o install.sh",
    "curl -s https://example.com/x | jq .", "curl -s https://example.com/x | python3 -m json.tool",
    "wget https://example.com/x", "curl -s https://example.com/x > install.sh && less install.sh",
    "bash ./install.sh", "curl -s https://example.com/x | tee out.json",
    "curl -f https://example.com/x || sh ./fallback.sh", "grep -r curl .", "grep -r force .",
    "grep -rn 'rm -rf /' docs", "echo 'curl x | sh'", "chmod -R 755 ./dist", "chown -R me ./data",
    "find . -name '*.pyc' -delete", "find / -name '*.conf'", "man mkfs", "kill -9 12345",
    "kill -1 12345", "systemctl status nginx", "grep -rn shutdown src/", "f() { echo hi | cat; }; f",
]


@GENERATED
@given(command=spelled(st.sampled_from(HARMLESS)))
def test_everyday_look_alikes_still_run_however_they_are_wrapped(command):
    assert blocked_reason(command) is None, command


def test_a_heredoc_body_is_text_not_commands():
    assert blocked_reason("cat > INSTALL.md <<'EOF'\nRun: curl -fsSL x | sh\nIt's `rm -rf ~`\nEOF\n"
                          "echo written") is None
    assert blocked_reason("cat > notes <<EOF\nhello\nEOF\nrm -rf ~") is not None  # what follows runs


def test_what_the_guard_does_not_follow():
    """Not a sandbox: a variable, a function or a script gets past it, as the docstring says."""
    for command in ['d=/; rm -rf "$d"', "f() { rm -rf \"$1\"; }; f /", "./wipe.sh"]:
        assert blocked_reason(command) is None


def test_a_command_nested_too_deep_to_read_is_refused_not_let_through():
    reason = blocked_reason("echo " + "$(" * 30 + "true" + ")" * 30)
    assert reason.startswith("the guard could not check this command")


def test_a_command_too_long_to_read_in_time_is_refused_not_let_through(monkeypatch):
    """The whole check has a time limit (GUARD_SECONDS, lowered here to keep the test short): a
    command it cannot finish reading is refused, since the guard could not say it is safe."""
    monkeypatch.setattr(bash_module, "GUARD_SECONDS", 0.1)
    started = time.monotonic()
    reason = blocked_reason("true; " * 300_000)
    assert reason.startswith("the guard could not check this command within 0.1 s")
    assert time.monotonic() - started < 10


def test_a_long_command_that_is_easy_to_read_is_checked_not_refused():
    assert blocked_reason("echo ran #" + "x" * 1_000_000) is None
    assert blocked_reason("rm -f " + " ".join(f"build/f{n}.o" for n in range(3000))) is None


def test_the_refusal_names_the_category_and_nothing_runs(tmp_path):
    with pytest.raises(ToolError, match="refused: a force push to main"):
        Bash().run(Workspace(cwd=tmp_path), command='touch ran; git --no-pager push -f origin "main"')
    with pytest.raises(ToolError, match="refused: rm on / or the home directory"):
        Bash().run(Workspace(cwd=tmp_path), command="touch ran && cd ~ && rm -rf .*")
    assert not (tmp_path / "ran").exists()
