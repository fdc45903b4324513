"""Every Python snippet of README.md and of the documentation pages runs on its own in a fresh
interpreter (no names from an earlier block), from a temporary directory; every command of the
README's shell blocks runs as printed, in order, in one temporary directory (a comment "exit
status N" on a command states its expected status, else 0).

Slow: each block starts numba and some train; CI runs them with ``--runslow``.
"""

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_blocks() -> list:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [("README.md", code) for code in re.findall(r"```python\n(.*?)```", text, flags=re.S)]


def rst_blocks() -> list:
    """``.. code-block:: python`` blocks of the hand-written pages (not the generated ones)."""
    out = []
    for page in sorted((ROOT / "docs").glob("*.rst")) + sorted((ROOT / "docs" / "theory").glob("*.rst")):
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() == ".. code-block:: python":
                j = i + 1
                body = []
                while j < len(lines) and (not lines[j].strip() or lines[j].startswith("   ")):
                    body.append(lines[j])
                    j += 1
                out.append((page.name, textwrap.dedent("\n".join(body)).strip() + "\n"))
                i = j
            else:
                i += 1
    return out


def md_blocks() -> list:
    """```python blocks of the Markdown guide pages (docs/*.md)."""
    out = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        out += [(page.name, code) for code in re.findall(r"```python\n(.*?)```", text, flags=re.S)]
    return out


def readme_commands() -> list:
    """(command line, expected exit status) for every command of README.md's ```bash blocks,
    in order; ``pip install ... &&`` prefixes and ``pytest`` lines are left out (the test runs
    in the installed checkout)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            cmd, _, comment = line.partition("#")
            cmd = cmd.strip()
            if "&&" in cmd and cmd.startswith("pip "):
                cmd = cmd.split("&&", 1)[1].strip()
            if not cmd or cmd.startswith(("pip ", "pytest")):
                continue
            m = re.search(r"exit status (\d+)", comment)
            out.append((cmd, int(m.group(1)) if m else 0))
    return out


BLOCKS = readme_blocks() + rst_blocks() + md_blocks()


def test_snippets_are_found():
    assert len(readme_blocks()) >= 1 and len(rst_blocks()) >= 4 and len(md_blocks()) >= 8
    assert any(c.startswith("depthsep reduce") for c, _ in readme_commands())


def test_readme_commands_name_real_commands():
    """Every ``depthsep X`` of the README (shell blocks and the results table) is a command."""
    from experiments import cli

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in re.findall(r"`depthsep ([a-z-]+)", text) + [
        c.split()[1] for c, _ in readme_commands() if c.startswith("depthsep ")
    ]:
        assert name in cli.EXPERIMENTS or name in cli.FILE_COMMANDS or name.startswith("-"), name


def _command_env() -> dict:
    # no time limit: the estimate-and-refuse guard calibrates on a run's first epochs, and on an
    # overloaded shared machine it can refuse a run that takes seconds when the machine is idle
    return {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "DEPTHSEP_MAX_SECONDS": "none"}


@pytest.mark.slow
def test_readme_commands_run_as_printed(tmp_path):
    env = _command_env()
    for cmd, expected in readme_commands():
        argv = shlex.split(cmd)
        if argv[0] == "depthsep":
            argv = [sys.executable, "-m", "experiments.cli", *argv[1:]]
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
        assert proc.returncode == expected, f"{cmd}: exit {proc.returncode}\n{proc.stderr[-3000:]}"


@pytest.mark.slow
def test_readme_results_table_commands_run_as_printed(tmp_path):
    """The commands of the results table that take seconds (after the main job they check)."""
    env = _command_env()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = [c for c in re.findall(r"\| `(depthsep [^`]+)` \|", text)]
    quick = [c for c in table if c.split()[1] in ("reduce", "check", "ip-demo", "separation-table")]
    assert len(quick) >= 3
    for cmd in quick:
        argv = [sys.executable, "-m", "experiments.cli", *shlex.split(cmd)[1:]]
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
        assert proc.returncode in (0, 1) if "check" in cmd else proc.returncode == 0, (
            cmd,
            proc.stderr[-2000:],
        )


@pytest.mark.slow
@pytest.mark.parametrize("source, code", BLOCKS, ids=[f"{s}-{i}" for i, (s, _) in enumerate(BLOCKS)])
def test_snippet_runs_alone(source, code, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, f"{source} block failed:\n{code}\n--- stderr ---\n{proc.stderr[-3000:]}"


def test_readme_says_up_front_what_was_not_available():
    # the first screen says the full text was not available and that the constructions and
    # constants are the project's own re-derivations
    head = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split("## ")[0].split())
    assert "three papers" in head and "was not available" in head, head
    assert "abstract" in head and "re-derivation" in head and "constant" in head, head


def test_readme_dask_snippets_run_as_scripts():
    # a LocalCluster starts processes (spawn): without the __main__ guard, saved as a script,
    # the snippet re-runs itself in every worker
    for _, code in readme_blocks() + md_blocks():
        if "LocalCluster(" in code:
            guard = code.find('if __name__ == "__main__":')
            assert 0 <= guard < code.find("LocalCluster(n_workers"), code
