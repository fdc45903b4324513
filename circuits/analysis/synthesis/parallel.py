"""Parallel driver: the cubes of one decision (:mod:`~circuits.analysis.synthesis.cubes`) as
independent tasks, serially, on local processes or on a Dask cluster, resumable from a JSON
state file, with progress and one honest combined status.

Combined status: "feasible" as soon as one cube is (its witness is re-verified on the whole
cube); "infeasible" only when every cube is; otherwise "unknown", with the cubes still open
listed.  A state file records every finished cube (written atomically after each one), so a
rerun with the same state file skips the decided cubes and retries only the unknown ones
(possibly with a longer ``time_limit``).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from circuits.analysis.synthesis.cubes import solve_cube, top_gate_cubes
from circuits.analysis.threshold_functions import _table
from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS
from circuits.hypercube import check_n_bits
from circuits.utils.errors import InvalidArgumentError
from circuits.utils.progress import progress_bar

__all__ = ["decide_by_cubes"]

STATE_FORMAT = "depthsep.synthesis_cubes"


def _task(table: list, g: list, time_limit: float, num_workers: int, restrict: int = 0,
          whole: bool = True) -> dict:
    """One cube as a picklable task (plain lists in, a plain dict out)."""
    t, gg = np.asarray(table, dtype=np.uint8), np.asarray(g, dtype=np.uint8)
    if restrict:
        from circuits.analysis.synthesis.restrict import solve_cube_restricted

        return solve_cube_restricted(t, gg, restrict, time_limit=time_limit,
                                     num_workers=num_workers, whole=whole)
    return solve_cube(t, gg, time_limit=time_limit, num_workers=num_workers)


def _load_state(path: "Path | None", key: dict) -> dict:
    from circuits.utils.files import read_json

    if path is None or not Path(path).exists():
        return {}
    rec = read_json(path)
    if rec.get("format") != STATE_FORMAT or rec.get("key") != key:
        raise InvalidArgumentError(f"state file {path} belongs to another decision (its key "
                                   f"{rec.get('key')!r} is not {key!r}); pass another --state "
                                   f"file or delete it")
    return {int(i): r for i, r in rec["cubes"].items()}


def _save_state(path: "Path | None", key: dict, done: dict) -> None:
    from circuits.utils.files import write_json_atomic

    if path is not None:
        write_json_atomic(path, {"format": STATE_FORMAT, "key": key,
                                 "cubes": {str(i): r for i, r in sorted(done.items())}})


def decide_by_cubes(truth_table, size: int, *, time_limit: float = 60.0, num_workers: int = 1,
                    processes: int = 1, client=None, state=None, progress: bool = True,
                    stop_on_feasible: bool = True, restrict: int = 0,
                    whole: bool = True) -> dict:
    """Decide "a THR o THR circuit with ``size`` hidden gates computes f" cube by cube.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N, 1 <= N <= 8
        The function f.
    size : int
        Hidden gates s, 1 <= s <= 6 (the cubes are the NP classes of threshold functions of s
        inputs).
    time_limit : float
        CP-SAT seconds per cube.
    num_workers : int
        CP-SAT threads per cube.
    processes : int
        Local worker processes (1: serial, in this process).
    client : dask.distributed.Client or str, optional
        Run the cubes as Dask tasks on this client (or a scheduler address).
    state : path, optional
        JSON state file: finished cubes are recorded there and skipped by a rerun.
    progress : bool
        Show a progress bar over the cubes.
    stop_on_feasible : bool
        Stop submitting cubes once one is feasible.
    restrict : int
        Before each cube's own model, try f's restrictions fixing up to this many inputs
        (:func:`~circuits.analysis.synthesis.restrict.solve_cube_restricted`; each attempt gets
        ``time_limit``); an infeasible restriction refutes the cube.  0: f's own cube only.
    whole : bool
        With ``restrict``, decide f's own cube when no restriction refutes it (False: leave it
        unknown, e.g. when an earlier run already spent its time on it).

    Returns
    -------
    dict
        ``status`` (combined), ``cubes`` (total), ``infeasible``, ``unknown`` (indices still
        open), ``feasible`` (index or None), ``witness``, ``wall_s`` (this run),
        ``cube_seconds`` (solver seconds summed over every cube, earlier runs included).
    """
    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="decide_by_cubes")
    s = check_n_bits(size, name="size", minimum=1, maximum=6)
    if not time_limit > 0:
        raise InvalidArgumentError(f"time_limit must be > 0 seconds, got {time_limit}")
    processes = check_n_bits(processes, name="processes", minimum=1, maximum=256)
    restrict = check_n_bits(restrict, name="restrict", minimum=0, maximum=max(0, n - 1))
    cubes = top_gate_cubes(s)
    key = {"table": "".join(map(str, t.tolist())), "size": s}
    path = None if state is None else Path(state)
    loaded = _load_state(path, key)
    done = {i: r for i, r in loaded.items() if r["status"] != "unknown"}
    todo = [i for i in range(len(cubes)) if i not in done]
    if stop_on_feasible and any(r["status"] == "feasible" for r in done.values()):
        todo = []
    t0 = time.perf_counter()
    args = [(t.tolist(), cubes[i].tolist(), float(time_limit), int(num_workers), restrict,
             bool(whole or not restrict))
            for i in todo]
    with progress_bar(len(cubes), enabled=progress, desc=f"cubes s={s}", unit="cube") as bar:
        bar.update(len(cubes) - len(todo))
        for i, r in _results(todo, args, processes, client, stop_on_feasible):
            done[i] = _with_earlier(r, loaded.get(i))
            _save_state(path, key, {**loaded, **done})     # open cubes not retried yet stay
            bar.update(1)
    return _combine(done, len(cubes), time.perf_counter() - t0)


def _results(todo, args, processes, client, stop_on_feasible):
    """Yield (cube index, result) as cubes finish, on the chosen backend."""
    if client is not None:
        yield from _dask_results(todo, args, client, stop_on_feasible)
        return
    if processes == 1:
        for i, a in zip(todo, args):
            r = _task(*a)
            yield i, r
            if stop_on_feasible and r["status"] == "feasible":
                return
        return
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    with ProcessPoolExecutor(processes, mp_context=mp.get_context("spawn")) as ex:
        futs = {ex.submit(_task, *a): i for i, a in zip(todo, args)}
        pending = set(futs)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                r = f.result()
                yield futs[f], r
                if stop_on_feasible and r["status"] == "feasible":
                    for p in pending:
                        p.cancel()
                    return


def _dask_results(todo, args, client, stop_on_feasible):
    from circuits.utils._dask import _as_client

    distributed_client, owned = _as_client(client)
    try:
        from distributed import as_completed

        futs = {distributed_client.submit(_task, *a, pure=False): i for i, a in zip(todo, args)}
        for f in as_completed(list(futs)):
            r = f.result()
            yield futs[f], r
            if stop_on_feasible and r["status"] == "feasible":
                distributed_client.cancel([p for p in futs if not p.done()])
                return
    finally:
        if owned:
            distributed_client.close()


def _combine(done: dict, total: int, wall: float) -> dict:
    feasible = [i for i, r in sorted(done.items()) if r["status"] == "feasible"]
    infeasible = [i for i, r in done.items() if r["status"] == "infeasible"]
    unknown = [i for i in range(total) if i not in done or done[i]["status"] == "unknown"]
    if feasible:
        status = "feasible"
    elif len(infeasible) == total:
        status = "infeasible"
    else:
        status = "unknown"
    return {"status": status, "cubes": total, "infeasible": len(infeasible),
            "unknown": unknown if not feasible else [], "feasible": feasible[0] if feasible else None,
            "witness": done[feasible[0]]["witness"] if feasible else None,
            "wall_s": round(wall, 3),
            "cube_seconds": round(sum(_seconds(r) for r in done.values()), 3)}


def _with_earlier(r: dict, old: "dict | None") -> dict:
    """A new cube result that keeps the record of an earlier run that left the cube open."""
    if old is None:
        return r
    was = dict(old)
    return {**r, "earlier": was.pop("earlier", []) + [was]}


def _seconds(r: dict) -> float:
    """Solver seconds of one cube record, earlier runs that left it open included."""
    return r["wall_s"] + sum(e["wall_s"] for e in r.get("earlier", ()))
