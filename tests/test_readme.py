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
