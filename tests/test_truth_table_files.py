"""Truth-table files: one loader (circuits.io.load_truth_table) for every command that reads one.

``least-circuit --function table --table FILE`` used to read the file with its own
``np.loadtxt``/``np.load`` and cast to uint8 before any check, so a table the user never gave
(``0 0.5 1 0`` -> [0, 0, 1, 0]) was answered "proved minimal".  Every file below must be refused
with a DepthsepError naming the file, or read exactly.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from circuits.analysis.exact_synthesis import target_table
from circuits.utils.errors import DepthsepError

TEXT_BAD = ["0 0.5 1 0", "0 256 1 0", "0 1e300 1 0", "9" * 5000, "nan 1 1 0", "inf 0 0 1",
            "0 1 2 0", "", "0 1 1"]
NPY_BAD = [np.array([0, .7, 1, .2]), np.array([0, -255, 1, 0]), np.array([0, 1j, 1, 0]),
           np.array(["0", "1", "1", "0"]), np.array([[0, 1], [1, 0]]), np.array([0, 256, 1, 0])]


@pytest.mark.parametrize("text", TEXT_BAD)
def test_text_tables_that_are_not_0_1_are_refused(tmp_path, text):
    p = tmp_path / "t.txt"
    p.write_text(text)
    with pytest.raises(DepthsepError, match="t.txt"):
        target_table("table", 2, table=p)


@pytest.mark.parametrize("k", range(len(NPY_BAD)))
def test_npy_tables_that_are_not_0_1_are_refused(tmp_path, k):
    p = tmp_path / "t.npy"
    np.save(p, NPY_BAD[k])
    with pytest.raises(DepthsepError, match="t.npy"):
        target_table("table", 2, table=p)


def test_huge_npy_header_is_refused_before_allocation(tmp_path):
    p = tmp_path / "big.npy"
    np.save(p, np.zeros(4, dtype=np.uint8))
    raw = p.read_bytes().replace(b"(4,)", b"(1099511627776,)")
    p.write_bytes(raw)
    with pytest.raises(DepthsepError, match="big.npy"):
        target_table("table", 2, table=p)


@pytest.mark.parametrize("content", ["0110", "0 1 1 0", "0,1,1,0", "[0,1,1,0]",
                                     '{"truth_table": [0, 1, 1, 0]}'])
def test_every_documented_form_reads_exactly(tmp_path, content):
    p = tmp_path / ("t.json" if content[0] in "[{" else "t.txt")
    p.write_text(content)
    table, name = target_table("table", 2, table=p)
    assert table.dtype == np.uint8 and table.tolist() == [0, 1, 1, 0]


def test_fifo_device_directory_and_binary_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"\xff\xfe0110")
    for p in (fifo, link, tmp_path, binary):
        with pytest.raises(DepthsepError, match=str(p.name)):
            target_table("table", 2, table=p)


def test_least_circuit_refuses_a_table_it_would_have_rounded(tmp_path):
    """The command itself: no "proved" answer for a table that is not 0/1."""
    from experiments import least_circuit

    p = tmp_path / "t.txt"
    p.write_text("0 0.5 1 0\n")
    with pytest.raises(DepthsepError, match="only the characters 0 and 1"):
        least_circuit.main(["--function", "table", "--table", str(p), "--out",
                            str(tmp_path / "out"), "--no-progress"])
    assert not (tmp_path / "out" / "least_circuit.json").exists()
