"""scripts/setup.sh and scripts/run, the README's set-up and its way to run the other two commands."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _copy_checkout(dest):
    """The checkout's files (tracked, and untracked but not ignored) copied to dest: no .venv, no build."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout, to know which files belong to the project")
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listing):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def _outside_any_venv():
    """The environment of a shell with no virtual environment active (this one's bin/ off PATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    if sys.prefix != sys.base_prefix:
        venv_bin = str(Path(sys.prefix) / "bin")
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return env


def _bash(*args, cwd, env, timeout=60):
    return subprocess.run(["bash", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_run_without_an_environment_sets_it_up_first(tmp_path):
    """A fresh clone: scripts/run calls scripts/setup.sh (here a stand-in that makes .venv), then runs the command
    in it; a failing set-up is reported, and without setup.sh it says what to do."""
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "run", tmp_path / "scripts" / "run")
    result = _bash("scripts/run", "python", "-c", "pass", cwd=tmp_path, env=_outside_any_venv())
    assert result.returncode == 1 and "bash scripts/setup.sh" in result.stderr
    (tmp_path / "scripts" / "setup.sh").write_text("exit 3\n")
    result = _bash("scripts/run", "python", "-c", "pass", cwd=tmp_path, env=_outside_any_venv())
    assert result.returncode == 1 and "the set-up failed" in result.stderr
    (tmp_path / "scripts" / "setup.sh").write_text(
        'mkdir -p .venv/bin && ln -s "$(command -v python3)" .venv/bin/python && echo made\n')
    result = _bash("scripts/run", "bash", "-c", 'echo "ran in $VIRTUAL_ENV"', cwd=tmp_path, env=_outside_any_venv())
    assert result.returncode == 0, result.stderr
    assert "setting it up first" in result.stderr and "made" in result.stderr
    assert result.stdout.strip() == f"ran in {tmp_path / '.venv'}"
    again = _bash("scripts/run", "bash", "-c", "echo second", cwd=tmp_path, env=_outside_any_venv())
    assert again.stdout.strip() == "second" and "setting it up" not in again.stderr


def test_run_uses_the_active_environment(tmp_path):
    env = {**_outside_any_venv(), "VIRTUAL_ENV": str(tmp_path / "elsewhere")}
    result = _bash(str(ROOT / "scripts" / "run"), "bash", "-c", 'echo "$VIRTUAL_ENV"', cwd=tmp_path, env=env)
    assert result.returncode == 0 and result.stdout.strip() == str(tmp_path / "elsewhere")


def test_run_and_setup_refuse_bad_usage(tmp_path):
    assert _bash(str(ROOT / "scripts" / "run"), cwd=tmp_path, env=_outside_any_venv()).returncode == 2
    result = _bash(str(ROOT / "scripts" / "setup.sh"), "--no-such-option", cwd=tmp_path, env=_outside_any_venv())
    assert result.returncode == 2 and "--with-browser" in result.stderr


@pytest.mark.slow
def test_setup_in_a_fresh_copy_creates_and_uses_its_own_venv(tmp_path):
    """The README's set-up in a fresh copy of the checkout, outside any virtual environment.

    Needs PyPI (or pip's cache): it installs everything, as on a new machine; a few minutes.
    """
    checkout = _copy_checkout(tmp_path / "checkout")
    env = _outside_any_venv()
    result = _bash("scripts/setup.sh", cwd=checkout, env=env, timeout=1500)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "creating the project's virtual environment .venv" in result.stdout
    assert (checkout / ".venv" / "bin" / "python").is_file()
    assert "warm-up logistic" in result.stdout and "warm-up refits" in result.stdout  # the kernels, compiled
    assert list((checkout / "shap_instances" / "linear" / "__pycache__").glob("_logistic_kernels.*.nbi"))

    where = _bash("scripts/run", "python", "-c", "import sys, shap_instances; print(sys.prefix); "
                  "print(shap_instances.__file__)", cwd=checkout, env=env)
    assert where.returncode == 0, where.stderr
    prefix, module = where.stdout.split()
    assert Path(prefix).resolve() == (checkout / ".venv").resolve()
    assert Path(module).resolve().is_relative_to(checkout.resolve())  # the editable install of this copy

    listed = _bash("scripts/run", "shap-instances", "list", cwd=checkout, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "instance_kernel" in listed.stdout and "knn_shapley" in listed.stdout  # the example plugins are installed
    assert "LeaveOneOutExplainer" in listed.stdout

    again = _bash("scripts/setup.sh", cwd=checkout, env=env, timeout=900)  # a second run reuses .venv
    assert again.returncode == 0 and "(exists)" in again.stdout, again.stderr[-2000:]
