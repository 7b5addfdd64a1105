"""Static properties of the Dockerfile users build (the image itself is built by .ci/container-check).

Cheap checks of what a reviewer would otherwise have to remember: a base pinned to a Python minor
version and a Debian release whose JRE Spark 4 runs on, the extras mm2's commands need, a non-root user,
SIGTERM as the stop signal through an init, a HEALTHCHECK whose module exists, no pip in the final stage,
a build context without the venv, and .ci/run never building the image.
"""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped, as Docker reads them."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
            continue
        full = pending + stripped
        pending = ""
        keyword, _, args = full.partition(" ")
        out.append((keyword.upper(), args.strip()))
    return out


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    return instructions((ROOT / "Dockerfile").read_text())


def final_stage(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    starts = [i for i, (kw, _) in enumerate(items) if kw == "FROM"]
    return items[starts[-1] :]


def arg_default(items: list[tuple[str, str]], name: str) -> str:
    for kw, args in items:
        if kw == "ARG" and args.startswith(f"{name}="):
            return args.split("=", 1)[1]
    raise AssertionError(f"no ARG {name}=... in the Dockerfile")


def test_instructions_join_continuations_and_drop_comments() -> None:
    text = "# c\nFROM x AS b\nRUN a \\\n    # note\n    && b\nUSER me\n"
    assert instructions(text) == [("FROM", "x AS b"), ("RUN", "a && b"), ("USER", "me")]


def test_base_is_pinned_to_a_python_version_and_a_debian_release(dockerfile: list[tuple[str, str]]) -> None:
    base = arg_default(dockerfile, "BASE")
    assert re.fullmatch(r"python:3\.1[1-9](\.\d+)?-slim-(bookworm|trixie)", base), base
    assert all(args.split()[0] == "${BASE}" for kw, args in dockerfile if kw == "FROM")


def test_the_jre_is_one_spark_4_runs_on_and_in_the_base_release(dockerfile: list[tuple[str, str]]) -> None:
    jre = arg_default(dockerfile, "JRE")
    release = arg_default(dockerfile, "BASE").rsplit("-", 1)[1]
    # Debian ships openjdk-17 in bookworm and openjdk-21 in trixie, and Spark 4 runs on both.
    assert jre == {"bookworm": "openjdk-17-jre-headless", "trixie": "openjdk-21-jre-headless"}[release]
    installs = [args for kw, args in final_stage(dockerfile) if kw == "RUN" and "apt-get install" in args]
    assert installs and '"${JRE}"' in installs[0] and "--no-install-recommends" in installs[0]
    assert "rm -rf /var/lib/apt/lists/*" in installs[0]


def test_default_extras_are_the_ones_mm2_commands_need(dockerfile: list[tuple[str, str]]) -> None:
    extras = arg_default(dockerfile, "EXTRAS").split(",")
    assert set(extras) == {"spark", "embedded", "fast"}  # backfill/verify/translate-offsets; demo; REST loop
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras) <= set(declared)


def test_final_stage_runs_as_a_non_root_user(dockerfile: list[tuple[str, str]]) -> None:
    users = [args for kw, args in final_stage(dockerfile) if kw == "USER"]
    assert users and users[-1] not in ("root", "0") and not users[-1].startswith(("root:", "0:"))


def test_stop_is_sigterm_to_mm2_under_an_init(dockerfile: list[tuple[str, str]]) -> None:
    final = final_stage(dockerfile)
    assert ("STOPSIGNAL", "SIGTERM") in final
    entrypoint = json.loads(next(args for kw, args in final if kw == "ENTRYPOINT"))  # exec form: no shell
    assert Path(entrypoint[0]).name == "tini" and entrypoint[-1] == "mm2"
    assert any(kw == "RUN" and " tini" in args for kw, args in final)


def test_healthcheck_runs_a_module_the_image_has(dockerfile: list[tuple[str, str]]) -> None:
    health = [args for kw, args in final_stage(dockerfile) if kw == "HEALTHCHECK"]
    assert len(health) == 1
    command = json.loads(health[0].split("CMD", 1)[1])
    module = command[command.index("-m") + 1]
    assert importlib.util.find_spec(module) is not None


def test_default_command_serves_the_exposed_metrics_port(dockerfile: list[tuple[str, str]]) -> None:
    final = final_stage(dockerfile)
    cmd = json.loads(next(args for kw, args in final if kw == "CMD"))
    exposed = next(args for kw, args in final if kw == "EXPOSE").split()
    assert cmd[:2] == ["run", "/etc/mm2/mm2.properties"]
    assert cmd[cmd.index("--metrics-port") + 1] in exposed and "8083" in exposed


def test_no_pip_or_build_tools_in_the_final_stage(dockerfile: list[tuple[str, str]]) -> None:
    final = final_stage(dockerfile)
    runs = " ".join(args for kw, args in final if kw == "RUN")
    assert "pip" not in runs
    assert not re.search(r"\b(build-essential|gcc|g\+\+|make|python3-dev)\b", runs)
    assert any(kw == "COPY" and args.startswith("--from=build /opt/mm2/venv") for kw, args in final)
    build = dockerfile[: len(dockerfile) - len(final)]
    assert any(kw == "ENV" and "PIP_NO_CACHE_DIR=1" in args for kw, args in build)


def test_build_context_leaves_out_venv_git_and_tests() -> None:
    lines = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()]
    rules = [ln for ln in lines if ln and not ln.startswith("#")]
    assert rules[0] == "**"  # everything out, then only what the image is built from
    assert {r.lstrip("!").rstrip("/") for r in rules if r.startswith("!")} == {
        "pyproject.toml",
        "README.md",
        "connect_core",
        "mirror",
        "configs",
    }


def test_the_image_check_is_not_part_of_the_test_run() -> None:
    assert "container-check" not in (ROOT / ".ci" / "run").read_text()
    script = ROOT / ".ci" / "container-check"
    assert script.stat().st_mode & 0o111


def test_every_data_file_of_the_packages_is_installed() -> None:
    """The image installs mm2 from a wheel, not in editable mode: a file the code reads must be package data."""
    import fnmatch

    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for top in ("connect_core", "mirror"):
        for path in (ROOT / top).rglob("*"):
            if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            package = ".".join(path.parent.relative_to(ROOT).parts)
            patterns = package_data.get(package, []) + package_data.get("*", [])
            assert any(fnmatch.fnmatch(path.name, p) for p in patterns), f"{path.relative_to(ROOT)} is not package data"
