"""Every "THEORY §x" reference in code and docs names a section that exists in docs/theory.

The theory pages carry explicit anchors ``.. _theory-4.5:`` (sections §0-§7 keep the numbering
of the project's original notes, THEORY.md); code and docs cite them as "THEORY §4.5",
"THEORY.md §4.5", "THEORY.md section 1.1", ranges "THEORY §4.3-4.4", pitfalls "THEORY.md pitfall
8" / "THEORY §7, pitfall 5" and experiment rows "THEORY E13".  A reference to a missing section
fails here, with the file and line, so the check keeps holding while the code changes.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THEORY_DIR = ROOT / "docs" / "theory"
SKIP_DIRS = {
    ".git",
    "build",
    "dist",
    "_build",
    "auto_examples",
    "generated",
    "__pycache__",
    ".venv",
    "venv",
    "results",
    ".hypothesis",
    ".pytest_cache",
}
SUFFIXES = {".py", ".md", ".rst", ".txt", ".toml"}

SECTION = r"(\d+(?:\.\d+)?)"
# "THEORY §4.5", "THEORY.md §1.2–§1.3", "THEORY §4.3–4.4", "THEORY.md section 1.5", "THEORY's §2"
REF = re.compile(
    r"THEORY(?:\.md)?(?:'s)?[ \t]*(?:§[ \t]*|section[ \t]+)"
    + SECTION
    + r"(?:[ \t]*[-–][ \t]*§?[ \t]*"
    + SECTION
    + r")?"
)
PITFALL = re.compile(r"THEORY(?:\.md)?(?:[ \t]*§7,)?[ \t]*pitfall[ \t]+(\d+)")
ROW = re.compile(r"THEORY(?:\.md)?(?:'s)?[ \t]+(E\d+)(?:[ \t]*[-–][ \t]*(E\d+))?")
ANCHOR = re.compile(r"\.\. _theory-([0-9a-z.]+):")


def _files():
    for path in ROOT.rglob("*"):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(ROOT)
        if (
            any(part in SKIP_DIRS for part in rel.parts[:-1])
            or rel.parts[0] == "docs"
            and len(rel.parts) > 1
            and rel.parts[1] in ("_build", "api", "auto_examples")
        ):
            continue
        if path.resolve() == Path(__file__).resolve():
            continue
        yield path


def anchors() -> set:
    found = set()
    for page in THEORY_DIR.glob("*.rst"):
        found |= set(ANCHOR.findall(page.read_text(encoding="utf-8")))
    return found


def pitfall_count() -> int:
    text = (THEORY_DIR / "conventions.rst").read_text(encoding="utf-8")
    body = text.split(".. _theory-7:", 1)[1]
    return len(re.findall(r"^\d+\. ", body, re.M))


def references():
    """(file, line number, label) for every theory reference in the repository."""
    out = []
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in REF.finditer(line):
                out.append((path, lineno, m.group(1)))
                if m.group(2):
                    out.append((path, lineno, m.group(2)))
            for m in PITFALL.finditer(line):
                out.append((path, lineno, f"pitfall {m.group(1)}"))
            for m in ROW.finditer(line):
                out.append((path, lineno, m.group(1).lower()))
                if m.group(2):
                    lo, hi = int(m.group(1)[1:]), int(m.group(2)[1:])
                    out += [(path, lineno, f"e{i}") for i in range(lo, hi + 1)]
    return out


def test_theory_pages_have_every_section_of_the_notes():
    have = anchors()
    expected = {
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
        "1.1",
        "1.2",
        "1.3",
        "1.4",
        "1.5",
        "2.1",
        "2.2",
        "2.3",
        "2.4",
        "2.5",
        "3.1",
        "3.2",
        "3.3",
        "3.4",
        "3.5",
        "3.6",
        "3.7",
        *(f"4.{i}" for i in range(9)),
        *(f"e{i}" for i in range(1, 23)),
    }
    assert expected <= have, sorted(expected - have)


def test_every_theory_reference_resolves():
    have = anchors()
    n_pitfalls = pitfall_count()
    refs = references()
    assert len(refs) > 50  # the scan sees the code base (negative control for the regex)
    missing = []
    for path, lineno, label in refs:
        if label.startswith("pitfall "):
            ok = 1 <= int(label.split()[1]) <= n_pitfalls
        else:
            ok = label in have
        if not ok:
            missing.append(f"{path.relative_to(ROOT)}:{lineno}: THEORY {label}")
    assert not missing, "references to sections that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    "text, labels",
    [
        ("see THEORY §4.5 and THEORY.md §1.2", ["4.5", "1.2"]),
        ("(THEORY §4.3–4.4)", ["4.3", "4.4"]),
        ("THEORY.md section 1.1", ["1.1"]),
        ("THEORY.md pitfall 8", ["pitfall 8"]),
        ("THEORY E13 asks", ["e13"]),
        ("THEORY E1-E3", ["e1", "e1", "e2", "e3"]),
    ],
)
def test_reference_patterns(tmp_path, monkeypatch, text, labels):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "x.py").write_text(text + "\n")
    assert sorted(label for _, _, label in references()) == sorted(labels)


def test_a_missing_section_is_reported(tmp_path, monkeypatch):
    """Negative control: a reference to §9.9 must not resolve."""
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "x.py").write_text("# THEORY §9.9\n")
    assert [label for _, _, label in references()] == ["9.9"]
    assert "9.9" not in anchors()
