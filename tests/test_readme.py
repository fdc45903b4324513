"""Every Python snippet of README.md and of the documentation pages runs on its own in a fresh
interpreter (no names from an earlier block), from a temporary directory.

Slow: each block starts numba and some train; CI runs them with ``--runslow``.
"""

import os
import re
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


BLOCKS = readme_blocks() + rst_blocks()


def test_snippets_are_found():
    assert len(readme_blocks()) >= 8 and len(rst_blocks()) >= 4


@pytest.mark.slow
@pytest.mark.parametrize("source, code", BLOCKS, ids=[f"{s}-{i}" for i, (s, _) in enumerate(BLOCKS)])
def test_snippet_runs_alone(source, code, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, f"{source} block failed:\n{code}\n--- stderr ---\n{proc.stderr[-3000:]}"


def test_readme_says_up_front_what_was_not_available():
    # issue 24: the first lines say the full text was not available and that the constructions
    # and constants are the project's own re-derivations
    head = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split("## ")[0].split())
    assert "three papers" in head and "was not available" in head, head
    assert "abstract" in head and "re-derivation" in head and "constant" in head, head


def test_readme_dask_snippets_run_as_scripts():
    # a LocalCluster starts processes (spawn): without the __main__ guard, saved as a script,
    # the snippet re-runs itself in every worker
    for _, code in readme_blocks():
        if "LocalCluster(" in code:
            guard = code.find('if __name__ == "__main__":')
            assert 0 <= guard < code.find("LocalCluster(n_workers"), code
