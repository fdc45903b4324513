"""SIGKILL the main experiment at random times; check that no partial or temp file is left.

    PYTHONPATH=$PWD python benchmarks/sigkill_reduction.py [--kills 10] [--out /tmp/x]

Runs ``experiments/reduction.py --n 4 --out OUT`` ``--kills`` times, each killed with SIGKILL
at a uniformly random moment of its run (measured first), keeping OUT between runs as a user
would.  After each kill: every result file must be complete (report.json parses, the PNG ends
with its IEND chunk) and temp files (``.NAME.PID-XXXXXXXX.tmp``) are listed.  A final
uninterrupted run must leave exactly the result files (the next atomic write removes the
leftovers of killed writers).
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _state(out: Path) -> dict:
    names = sorted(p.name for p in out.iterdir()) if out.exists() else []
    temps = [n for n in names if n.endswith(".tmp")]
    complete = True
    for n in names:
        p = out / n
        if n.endswith(".json"):
            try:
                json.loads(p.read_text())
            except ValueError:
                complete = False
        elif n.endswith(".png"):
            data = p.read_bytes()
            complete &= data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82")
    return {"files": [n for n in names if not n.endswith(".tmp")], "temp_files": temps,
            "all_complete": complete}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--out", type=Path, default=Path("/tmp/x"))
    ap.add_argument("--seed", type=int, default=14)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, str(ROOT / "experiments" / "reduction.py"), "--n", "4", "--out",
           str(args.out)]
    shutil.rmtree(args.out, ignore_errors=True)
    t = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, check=True)
    full = time.perf_counter() - t
    print(f"uninterrupted run: {full:.1f} s; state {_state(args.out)}", flush=True)
    shutil.rmtree(args.out, ignore_errors=True)
    records = []
    killed = 0
    while killed < args.kills and len(records) < 3 * args.kills:
        at = rng.uniform(0.5, full * 0.95)
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(at)
        finished = p.poll() is not None
        if not finished:
            p.send_signal(signal.SIGKILL)
        p.wait()
        st = _state(args.out)
        killed += not finished
        rec = {"run": len(records) + 1, "at_s": round(at, 2), "finished_before_kill": finished,
               "exit": p.returncode, **st}
        records.append(rec)
        print(rec, flush=True)
    p = subprocess.run(cmd, env=env, capture_output=True)
    final = _state(args.out)
    print(f"final uninterrupted run: exit {p.returncode}; state {final}", flush=True)
    bad = [r for r in records if not r["all_complete"]]
    print(f"{killed} SIGKILLs in {len(records)} runs: {len(bad)} with a partial file; "
          f"{sum(bool(r['temp_files']) for r in records)} left a temp file right after the kill; "
          f"after the final run: temp files {final['temp_files']}, complete {final['all_complete']}")
    (ROOT / "benchmarks" / "results_sigkill.json").write_text(json.dumps(
        {"command": " ".join(cmd[1:]), "uninterrupted_s": full, "kills": records,
         "final": final, "load": os.getloadavg()}, indent=2) + "\n")
    return 0 if not bad and not final["temp_files"] and final["all_complete"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
