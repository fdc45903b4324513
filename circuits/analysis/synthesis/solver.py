"""The CP-SAT side of exact synthesis: loading OR-Tools, one bounded solve, witness checks."""

from __future__ import annotations

import time

import numpy as np

from circuits.threshold import ThresholdCircuit
from circuits.utils.errors import DepthsepError, InvalidArgumentError, MissingDependencyError

__all__ = ["SOLVER_NAME", "verify_witness"]

SOLVER_NAME = "OR-Tools CP-SAT"


def _cp_model():
    try:
        from ortools.sat.python import cp_model
        import ortools
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError(
            "least_depth2 needs OR-Tools (CP-SAT), a dependency of depthsep: reinstall "
            "depthsep (pip install -e . in the checkout) or pip install ortools") from exc
    return cp_model, ortools.__version__


def verify_witness(circuit: ThresholdCircuit, table: np.ndarray) -> None:
    """Raise :class:`DepthsepError` unless ``circuit`` computes ``table`` on the whole cube."""
    from circuits.simulate import count_disagreements

    bad = count_disagreements(circuit, np.asarray(table, dtype=np.uint8)).count
    if bad:
        raise DepthsepError(f"solver witness disagrees with f on {bad} of {table.size} points; "
                            f"the solver's answer is wrong and was rejected")


def _check_solver_args(time_limit, num_workers) -> None:
    if num_workers < 1 or num_workers > 64:
        raise InvalidArgumentError(f"num_workers must be in 1..64, got {num_workers}")
    if not time_limit > 0:
        raise InvalidArgumentError(f"time_limit must be > 0 seconds, got {time_limit}")


def _run(model, time_limit, num_workers, seed, _solve=None):
    """(solver, "feasible" / "infeasible" / "unknown", wall seconds) of one CP-SAT solve."""
    cp_model, _ = _cp_model()
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(num_workers)
    solver.parameters.random_seed = int(seed)
    t0 = time.perf_counter()
    st = _solve(solver, model) if _solve is not None else solver.Solve(model)
    wall = time.perf_counter() - t0
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return solver, "feasible", wall
    if st == cp_model.INFEASIBLE:
        return solver, "infeasible", wall
    return solver, "unknown", wall
