"""``.ci/run`` (the README's second command) installs what the tests need on a machine that lacks it.

The script runs for real in a scratch copy of the repository, with a PATH that holds only the
tools it needs plus stubs that record their calls: ``apt-get`` (installs stub ``promtool``,
``prometheus``, ``stunnel4``, and a Java 17 ``java`` and ``keytool``), ``python3`` (makes a ``.venv/bin/python``
that records pip and pytest), ``id``, ``sudo``, and a ``java`` of a chosen version. So "no promtool" or "no
Java 17 on this machine" is tested here even where they are installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("bash", "dirname", "env", "cat", "chmod", "mkdir", "sed", "head", "sleep")
JDK = "openjdk-17-jre-headless"
PYTEST = "venv-python -m pytest -p no:cacheprovider -q -ra --durations=15 -n 8 --dist worksteal"
ARCHIVE = ".ci/spark_class_archive.py"

STUB = """#!/bin/bash
echo "{name} $*" >> "$CALLS"
{body}
"""
APT_GET_OK = """if [ "$1" = update ] && [ -n "$WAIT_FOR" ]; then  # a test of the two installs running at once
  for ((i = 0; i < 200; i++)); do [ -e "$WAIT_FOR" ] && break; sleep 0.05; done
  [ -e "$WAIT_FOR" ] || exit 100
fi
if [ "$1" = install ]; then
  for t in promtool prometheus stunnel4 keytool; do
    printf '#!/bin/bash\\nexit 0\\n' > "$STUBS/$t"; chmod +x "$STUBS/$t"
  done
  case " $* " in *" openjdk-17-jre-headless "*)
    printf '#!/bin/bash\\necho "openjdk version \\\\"${INSTALLED_JAVA:-17.0.15}\\\\" 2025-04-15" >&2\\n' > "$STUBS/java"
    chmod +x "$STUBS/java";;
  esac
fi
exit "${APT_EXIT:-0}"
"""
#: what ``java -version`` prints (on stderr), by Java release
JAVA_VERSION = {
    "8": 'java version "1.8.0_392"',
    "11": 'openjdk version "11.0.21" 2023-10-17',
    "17": 'openjdk version "17.0.15" 2025-04-15',
    "21": 'openjdk version "21.0.5" 2024-10-15',
}
VENV_PYTHON = """#!/bin/bash
echo "venv-python $*" >> "$CALLS"
echo "venv-python $* opts=$SPARK_SUBMIT_OPTS" >> "$CALLS.opts"
exit 0
"""
PYTHON3 = (
    """if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  cat > "$3/bin/python" <<'EOF'
"""
    + VENV_PYTHON
    + """EOF
  chmod +x "$3/bin/python"
fi
exit 0
"""
)


def _stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(STUB.format(name=name, body=body))
    path.chmod(0o755)


def _sandbox(
    tmp_path: Path,
    uid: int = 0,
    sudo: bool = False,
    prometheus: bool = False,
    stunnel: bool | None = None,
    java: str | None = "",
    keytool: bool | None = None,
) -> tuple[Path, dict[str, str]]:
    """``stunnel``: whether stunnel4 is present (by default: as prometheus); ``java``: the release of the
    ``java`` present (None: none; by default Java 17 with prometheus, none without); ``keytool``: whether
    keytool is present (by default: with java)."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy2(ROOT / ".ci" / "run", repo / ".ci" / "run")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (stubs / tool).symlink_to(found)
    _stub(stubs, "apt-get", APT_GET_OK)
    _stub(stubs, "python3", PYTHON3)
    _stub(stubs, "id", f"echo {uid}")
    if sudo:
        _stub(stubs, "sudo", '[ "$1" = -n ] && shift; exec "$@"')
    if prometheus:
        for t in ("promtool", "prometheus"):
            _stub(stubs, t, "exit 0")
    if prometheus if stunnel is None else stunnel:
        _stub(stubs, "stunnel4", "exit 0")
    release = ("17" if prometheus else None) if java == "" else java
    if release is not None:  # not a recording stub: asking its version is no call the tests list
        (stubs / "java").write_text(f"#!/bin/bash\necho '{JAVA_VERSION[release]}' >&2\n")
        (stubs / "java").chmod(0o755)
    if release is not None if keytool is None else keytool:
        _stub(stubs, "keytool", "exit 0")
    env = {"PATH": str(stubs), "CALLS": str(tmp_path / "calls"), "STUBS": str(stubs), "HOME": str(tmp_path)}
    return repo, env


def _run(repo: Path, env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    run = subprocess.run(
        [env["PATH"] + "/bash", str(repo / ".ci" / "run"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd="/",
    )
    calls_file = Path(env["CALLS"])
    calls = calls_file.read_text().splitlines() if calls_file.exists() else []
    # the Spark class archive is written in the background: when its call lands is not the script's order
    return run, [c for c in calls if not c.startswith("id ") and ARCHIVE not in c]


def test_sandbox_path_really_lacks_promtool(tmp_path: Path) -> None:
    _repo, env = _sandbox(tmp_path)
    assert shutil.which("promtool", path=env["PATH"]) is None
    assert shutil.which("prometheus", path=env["PATH"]) is None
    assert shutil.which("stunnel4", path=env["PATH"]) is None
    assert shutil.which("java", path=env["PATH"]) is None
    assert shutil.which("keytool", path=env["PATH"]) is None


def test_without_promtool_it_installs_prometheus_then_the_test_extra_then_runs_pytest(tmp_path: Path) -> None:
    repo, env = _sandbox(tmp_path)
    run, calls = _run(repo, env, "tests/unit", "-x")
    assert run.returncode == 0, run.stdout + run.stderr
    debian = [
        "apt-get update -qq",
        f"apt-get install -y -qq prometheus stunnel4 {JDK}",
    ]
    python = [
        "python3 -m venv .venv",
        "venv-python -m pip install -q --upgrade pip",
        "venv-python -m pip install -q -e .[test]",
    ]
    # Debian's install runs beside the Python one (each in its own order), and both are done before any test
    assert [c for c in calls[:5] if c.startswith("apt-get")] == debian
    assert [c for c in calls[:5] if not c.startswith("apt-get")] == python
    assert calls[5:] == [
        "venv-python -m pytest -p no:cacheprovider -q --collect-only",  # writes the bytecode caches once
        f"{PYTEST} tests/unit -x",
    ]
    assert (repo / ".venv" / "bin" / "python").exists()  # it ran in the repository, wherever it was called from


def test_debian_packages_install_while_the_python_ones_do(tmp_path: Path) -> None:
    """apt-get update waits here until the venv exists: run one after the other, it would never see it."""
    repo, env = _sandbox(tmp_path)
    run, calls = _run(repo, env | {"WAIT_FOR": str(repo / ".venv" / "bin" / "python")})
    assert run.returncode == 0, run.stdout + run.stderr
    assert calls[-1] == PYTEST


def test_spark_jvms_are_pointed_at_the_class_archive_that_is_written_in_the_background(tmp_path: Path) -> None:
    repo, env = _sandbox(tmp_path, prometheus=True)
    run, _ = _run(repo, env)
    assert run.returncode == 0, run.stderr
    archive = repo / ".venv" / "spark-classes.jsa"

    def calls() -> list[str]:
        return Path(env["CALLS"] + ".opts").read_text().splitlines()  # each call with the JVM options it had

    deadline = time.monotonic() + 30
    while not any(ARCHIVE in c for c in calls()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert f"venv-python {ARCHIVE} {archive} opts=" in "\n".join(calls())
    run_line = next(c for c in calls() if c.startswith(PYTEST))
    assert run_line.endswith(
        f"opts=-XX:SharedArchiveFile={archive} -Xlog:cds=off -Xlog:cds+dynamic=off -XX:TieredStopAtLevel=1"
    )


def test_with_prometheus_present_only_a_missing_stunnel4_is_installed(tmp_path: Path) -> None:
    repo, env = _sandbox(tmp_path, prometheus=True, stunnel=False)
    run, calls = _run(repo, env)
    assert run.returncode == 0, run.stderr
    assert [c for c in calls if c.startswith("apt-get")] == ["apt-get update -qq", "apt-get install -y -qq stunnel4"]


@pytest.mark.parametrize(
    ("java", "keytool", "why"),
    [
        (None, False, "no java at all"),
        ("8", True, "Java 8 (version 1.8): Spark 4 needs 17"),
        ("11", True, "Java 11"),
        ("17", False, "Java 17 without keytool (a JRE without its tools)"),
    ],
)
def test_without_java_17_and_keytool_a_jre_is_installed_in_the_same_apt_get_run(
    tmp_path: Path, java: str | None, keytool: bool, why: str
) -> None:
    repo, env = _sandbox(tmp_path, prometheus=True, stunnel=False, java=java, keytool=keytool)
    run, calls = _run(repo, env)
    assert run.returncode == 0, run.stderr
    assert [c for c in calls if c.startswith("apt-get")] == [
        "apt-get update -qq",
        f"apt-get install -y -qq stunnel4 {JDK}",
    ], why
    assert calls[-1] == PYTEST


@pytest.mark.parametrize("java", ["17", "21"])
def test_with_java_17_or_later_and_keytool_no_jre_is_installed(tmp_path: Path, java: str) -> None:
    repo, env = _sandbox(tmp_path, prometheus=True, stunnel=False, java=java)
    run, calls = _run(repo, env)
    assert run.returncode == 0, run.stderr
    assert [c for c in calls if c.startswith("apt-get")] == ["apt-get update -qq", "apt-get install -y -qq stunnel4"]


def test_when_the_installed_java_is_still_old_it_stops_with_one_line(tmp_path: Path) -> None:
    """Debian installed Java 17, yet an older java stays first on PATH: say so, run no test."""
    repo, env = _sandbox(tmp_path, prometheus=True, java="11")
    run, calls = _run(repo, env | {"INSTALLED_JAVA": "11.0.21"})
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(".ci/run: error: ") and "older than 17 (11)" in lines[0], run.stderr
    assert not [c for c in calls if "pytest" in c]


def test_with_prometheus_and_stunnel4_present_nothing_is_installed_from_debian(tmp_path: Path) -> None:
    repo, env = _sandbox(tmp_path, prometheus=True)
    run, calls = _run(repo, env)
    assert run.returncode == 0, run.stderr
    assert not [c for c in calls if c.startswith(("apt-get", "sudo"))]
    assert calls[-1] == PYTEST


def test_the_number_of_parallel_test_workers_can_be_set(tmp_path: Path) -> None:
    repo, env = _sandbox(tmp_path, prometheus=True)
    run, calls = _run(repo, env | {"MM2_TEST_WORKERS": "3"}, "-n", "0")
    assert run.returncode == 0, run.stderr
    assert calls[-1] == PYTEST.replace("-n 8", "-n 3") + " -n 0"  # the caller's own -n comes last and wins


def test_not_root_goes_through_sudo(tmp_path: Path) -> None:
    repo, env = _sandbox(tmp_path, uid=1000, sudo=True)
    run, calls = _run(repo, env)
    assert run.returncode == 0, run.stderr
    assert [c for c in calls if "apt-get" in c] == [
        "sudo -n apt-get update -qq",
        "apt-get update -qq",
        f"sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus stunnel4 {JDK}",
        f"apt-get install -y -qq prometheus stunnel4 {JDK}",
    ]


@pytest.mark.parametrize(
    ("uid", "apt_exit", "message"),
    [
        (1000, "0", "needs root (no sudo here)"),
        (0, "100", "apt-get update failed"),
    ],
)
def test_when_prometheus_cannot_be_installed_it_stops_with_one_line(
    tmp_path: Path, uid: int, apt_exit: str, message: str
) -> None:
    repo, env = _sandbox(tmp_path, uid=uid)
    run, calls = _run(repo, env | {"APT_EXIT": apt_exit})
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(".ci/run: error: ") and message in lines[0], run.stderr
    assert not [c for c in calls if "pytest" in c]


def test_readme_second_command_is_the_ci_script() -> None:
    readme = (ROOT / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", quickstart, re.S)
    assert block is not None
    commands = [line for line in block.group(1).splitlines() if line and not line.startswith("#")]
    assert commands[1] == "bash .ci/run"
    script = (ROOT / ".ci" / "run").read_text()
    assert "README's second" in script and "bash .ci/run" in script
    assert os.access(ROOT / ".ci" / "run", os.X_OK)
