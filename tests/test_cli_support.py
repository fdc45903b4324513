"""``depthsep check`` / ``spectrum`` / ``info`` on a circuit that records the support it is meant
for (``metadata.support``, as ``depthsep reduce`` writes it), and refusals before any work."""

import json
import time

import numpy as np
import pytest

import circuits
from circuits.io import circuit_to_dict
from experiments import _cli_support, cli


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _support_circuit(tmp_path, n=2, m=5, gates=7, seed=0, meta=True):
    """A random depth-2 circuit over 2m code bits and a random code of 2^n distinct words."""
    rng = np.random.default_rng(seed)
    words = rng.choice(1 << m, 1 << n, replace=False).astype(np.int64)
    W = rng.integers(-5, 6, size=(gates, 2 * m))
    t = rng.integers(-4, 5, size=gates)
    v = rng.integers(-3, 4, size=gates)
    c = circuits.ThresholdCircuit.depth2(W.tolist(), t.tolist(), v.tolist(), int(rng.integers(-2, 3)))
    doc = circuit_to_dict(c)
    if meta:
        doc["metadata"] = {"support": {"kind": "pair-code", "n": n, "m": m,
                                       "codewords": words.tolist(),
                                       "instance": {"class": "HardInstance", "n": n, "m": m,
                                                    "seed": seed}}}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    return path, c, words


def _naive_support_bits(c, n, m, words):
    """The twin: each pair's 2m bits built one by one, the generic evaluator; k = a + 2^n b."""
    out = []
    for k in range(1 << 2 * n):
        a, b = k % (1 << n), k >> n
        bits = [(int(words[a]) >> i) & 1 for i in range(m)] + [(int(words[b]) >> i) & 1 for i in range(m)]
        out.append(int(circuits.evaluate(c, np.array([bits], dtype=np.uint8))[0]))
    return np.array(out)


@pytest.mark.parametrize("numpy_terms", [1 << 31, 0])      # numpy path, neuron-wise kernels
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_support_bits_match_the_naive_twin(tmp_path, monkeypatch, numpy_terms, seed):
    monkeypatch.setattr(_cli_support, "NUMPY_TERMS", numpy_terms)
    path, c, words = _support_circuit(tmp_path, seed=seed)
    got = _cli_support._support_bits(c, 2, 5, words)
    assert got.tolist() == _naive_support_bits(c, 2, 5, words).tolist()


def test_check_counts_on_the_support_and_names_it(tmp_path, capsys):
    path, c, words = _support_circuit(tmp_path, seed=3)
    ref = _naive_support_bits(c, 2, 5, words)
    ip = np.array([bin((k % 4) & (k >> 2)).count("1") & 1 for k in range(16)])
    rc, out, err = run(capsys, "check", str(path), "--target", "ip", "--json")
    rec = json.loads(out)
    assert rec["domain"] == "support" and rec["n_points"] == 16
    assert rec["disagreements"] == int((ref != ip).sum()) and rc == (0 if rec["agrees"] else 1)
    # the control: the whole cube of the same file is another count over 2^10 points
    rc, out, _ = run(capsys, "check", str(path), "--target", "ip", "--whole-cube", "--json")
    assert json.loads(out)["n_points"] == 1 << 10
    # a circuit equal to IP on the support passes: its own support table as the target file
    table = tmp_path / "t.npy"
    np.save(table, ref.astype(np.uint8))
    rc, out, err = run(capsys, "check", str(path), "--target", str(table))
    assert rc == 0 and "every support point" in out and "HardInstance(n = 2, m = 5" in out


def test_refusals_come_before_any_work(tmp_path, capsys, monkeypatch):
    # a 48-input circuit without a support: refused from the header, the circuit never built
    W = [[1] * 48] * 300
    doc = {"format": "depthsep.circuit", "version": 1, "kind": "layered", "n_inputs": 48,
           "layers": [{"weights": W, "thresholds": [1] * 300},
                      {"weights": [[1] * 300], "thresholds": [1]}]}
    big = tmp_path / "big.json"
    big.write_text(json.dumps(doc))

    def never(*a, **k):
        raise AssertionError("the circuit was built before the refusal")

    monkeypatch.setattr("circuits.io.circuit_from_dict", never)
    t0 = time.perf_counter()
    rc, out, err = run(capsys, "check", str(big), "--target", "ip")
    assert rc == 1 and "2^48" in err and "DEPTHSEP_MAX_SECONDS" in err
    assert time.perf_counter() - t0 < 5
    rc, out, err = run(capsys, "spectrum", str(big))
    assert rc == 2 and "N = 48" in err and "allow_large" not in err
    # an unknown target is refused before the file is read
    rc, out, err = run(capsys, "check", str(tmp_path / "absent.json"), "--target", "nope")
    assert rc == 2 and "neither a known target nor a file" in err


def test_wrong_table_length_and_bad_support_are_named(tmp_path, capsys):
    path, c, words = _support_circuit(tmp_path, seed=4)
    table = tmp_path / "t.npy"
    np.save(table, np.zeros(1 << 10, dtype=np.uint8))
    rc, out, err = run(capsys, "check", str(path), "--target", str(table))
    assert rc == 2 and "needs 4^n = 16" in err and "--whole-cube" in err
    doc = json.loads(path.read_text())
    doc["metadata"]["support"]["codewords"][1] = doc["metadata"]["support"]["codewords"][0]
    path.write_text(json.dumps(doc))
    rc, out, err = run(capsys, "check", str(path), "--target", "ip")
    assert rc == 1 and "metadata.support: codewords must be distinct" in err


def test_info_and_spectrum_on_the_support(tmp_path, capsys):
    path, c, words = _support_circuit(tmp_path, seed=5)
    rc, out, _ = run(capsys, "info", str(path))
    assert rc == 0 and "meant for the 4^2 = 16 support points" in out
    rc, out, _ = run(capsys, "spectrum", str(path), "--json")
    rec = json.loads(out)
    assert rec["kind"] == "circuit on its support" and rec["n_inputs"] == 4
    ref = _naive_support_bits(c, 2, 5, words)
    signs = 1 - 2 * ref
    walsh = [int(sum(signs[k] * (-1) ** bin(k & u).count("1") for k in range(16))) for u in range(16)]
    assert rec["nonzero"] == sum(w != 0 for w in walsh)


@pytest.mark.parametrize("scale", [1, 1 << 50])          # float64 BLAS path, int64 path
def test_product_and_pair_evaluators_match_the_generic_kernel(scale):
    from circuits._product_eval import depth2_pair_bits, depth2_product_bits

    rng = np.random.default_rng(7)
    W = rng.integers(-5, 6, size=(9, 8)) * scale
    c = circuits.ThresholdCircuit.depth2(W.tolist(), (rng.integers(-4, 5, 9) * scale).tolist(),
                                         rng.integers(-3, 4, 9).tolist(), 0)
    L = rng.integers(0, 2, size=(5, 4)).astype(np.uint8)
    R = rng.integers(0, 2, size=(6, 4)).astype(np.uint8)
    ref = np.array([[circuits.evaluate(c, np.concatenate([L[a], R[b]])[None])[0] for b in range(6)]
                    for a in range(5)])
    assert depth2_product_bits(c, L, R).tolist() == ref.tolist()
    a, b = rng.integers(0, 5, 20), rng.integers(0, 6, 20)
    assert depth2_pair_bits(c, L, R, a, b).tolist() == ref[a, b].tolist()
    assert ref.min() != ref.max()                       # not a constant circuit
