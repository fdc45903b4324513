"""The E23/E25 verdict: what a depth-2 vs depth-3 table shows, in two families of clauses.

A table of trained and constructed nets can show two different things, and the verdict keeps
them apart:

* **expressivity** (what exists): the exact depth-3 net (ρ = 1) against the best depth-2 net
  known at each width, the maximum of the explicit IP_j floor and the trained nets, compared
  scale-free (best-affine R², cos printed next to it); the proven upper side for depth 2 is the
  per-path-norm ceiling of the sampled mode (E24), which bounds no net by its width alone, so at
  these sizes the expressivity separation is *undecided* unless a proven bound is supplied.
* **learnability** (what gradient descent finds from a random start): trained depth 3 against
  trained depth 2 **of equal parameter count** (``params(r1, r2)`` rows), each against random
  labels at the same widths.  Only a depth gain on IP that exceeds the depth gain on random
  labels (memorising capacity) by more than the seed spread plus a margin isolates depth.

"Separation shown" is printed only when a clause that isolates depth holds
(``isolates_depth``); every other outcome is named for what it is ("IP is hard to learn at both
depths", "depth-2 target gap between IP and MAJ∘AND", "IP is as hard as random labels").  The
verdict's ``headline`` is the only source of the figure's title.

Every comparison uses the best-affine R² (``r2_affine``: the squared Pearson correlation of N and
y, unchanged by any affine rescaling of N), so nets trained by MSE (small outputs) and the
{0, 1}-valued explicit nets are on the same footing.

Examples
--------
>>> v = verdict([])
>>> v["separation_shown"], v["headline"].startswith("nothing")
(False, True)
"""

from __future__ import annotations

import numpy as np

__all__ = ["PREDICTION", "summarise", "verdict", "clause_line", "MARGIN"]

#: The prediction, stated before the runs (checked by the ``prediction`` clauses).
PREDICTION = ("expressivity: the exact depth-3 net has R² = 1 at every n, and no depth-2 net "
              "known (explicit IP_j floor or trained) comes near it at polynomial width; "
              "learnability: trained depth 2 finds IP no better than random labels at every "
              "width (|ΔR²| within the seed spread + 0.02), MAJ∘AND keeps R² ≥ 0.4, and trained "
              "depth 3 at equal parameter count gains no more on IP than on random labels, so "
              "cold training shows no depth separation")
#: Margin added to the seed spread before a difference of best-affine R² counts.
MARGIN = 0.02


def _num(r, key):
    v = r.get(key)
    return None if v is None else float(v)


def summarise(rows) -> list:
    """One line per (kind, target, rule, n): best and median over seeds of R² (MSE-based) and of
    the best-affine R², ρ, cos; the spread of the best-affine R²; the parameter count; for IP
    depth-2 rows the explicit floor (best-affine R² and cos) and whether the best seed is below
    it (scale-free); any seed still improving."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["kind"], r["target"], r["rule"], r["n"]), []).append(r)
    out = []
    for (kind, target, rule, n), rs in sorted(groups.items(), key=lambda kv: (
            kv[0][3], kv[0][0], kv[0][1], kv[0][2])):
        r2 = [r["r2"] for r in rs if r.get("r2") is not None]
        ra = [float(r.get("r2_affine") or 0.0) for r in rs]
        rho = [r["rho"] for r in rs]
        best = max(rs, key=lambda r: (float(r.get("r2_affine") or 0.0), r["rho"]))
        line = {"kind": kind, "target": target, "rule": rule, "n": n, "widths": rs[0]["widths"],
                "depth": rs[0].get("depth"), "params": rs[0].get("params"), "seeds": len(rs),
                "r2_best": max(r2) if r2 else None,
                "r2_median": float(np.median(r2)) if r2 else None,
                "r2_spread": (max(r2) - min(r2)) if r2 else None,
                "r2_affine_best": max(ra), "r2_affine_median": float(np.median(ra)),
                "r2_affine_spread": max(ra) - min(ra), "cos_best": _num(best, "cos"),
                "rho_best": max(rho), "rho_median": float(np.median(rho)),
                "gamma_best": best.get("gamma"), "path_norm": best.get("path_norm"),
                "ceiling": best.get("ceiling"), "floor": best.get("floor"),
                "floor_cos": best.get("floor_cos"), "below_floor": best.get("below_floor"),
                "still_improving": any(r.get("still_improving") for r in rs),
                "seconds": sum(r.get("seconds", 0.0) for r in rs)}
        out.append(line)
    return out


def _clause(status, detail, *, family, isolates_depth=False, name=""):
    return {"status": status, "detail": list(detail), "family": family,
            "isolates_depth": bool(isolates_depth), "name": name}


def _ra(s):
    v = s.get("r2_affine_best")
    if v is None:                       # summaries written before best-affine R² existed
        v = s.get("r2_best")
    return 0.0 if v is None else float(v)


def _spread(*lines):
    return max([float(s.get("r2_affine_spread", s.get("r2_spread")) or 0.0) for s in lines]
               + [0.0])


def _nearest(lines, params):
    """The line whose parameter count is nearest ``params`` (None without counts)."""
    cands = [s for s in lines if s.get("params")]
    if not cands or not params:
        return None
    return min(cands, key=lambda s: (abs(s["params"] - params), s["params"]))


def _depth_gain(summary, *, kind3, kind2, hard, control, label):
    """Per (depth-3 rule, n): gain_t = R²_aff(depth 3) − R²_aff(depth 2 at equal parameter
    count) for t = hard and control; holds at n when gain_hard > tol and gain_hard − gain_control
    > tol (tol = largest seed spread of the four lines + MARGIN)."""
    d3 = [s for s in summary if s["kind"] == kind3 and s["target"] == hard
          and s.get("depth", 3) == 3]
    if not d3:
        return None
    detail, last = [], {}
    have_control = False
    for s3 in sorted(d3, key=lambda s: (s["rule"], s["n"])):
        n = s3["n"]
        pool = [s for s in summary if s["kind"] == kind2 and s["n"] == n
                and s.get("depth", 2) == 2]
        s2 = _nearest([s for s in pool if s["target"] == hard], s3.get("params"))
        if s2 is None:
            continue
        c3 = next((s for s in summary if s["kind"] == kind3 and s["target"] == control
                   and s["rule"] == s3["rule"] and s["n"] == n and s.get("depth", 3) == 3), None)
        c2 = _nearest([s for s in pool if s["target"] == control], s3.get("params"))
        g = _ra(s3) - _ra(s2)
        text = (f"{label} {s3['rule']} n={n}: R²_aff {hard} depth 3 {_ra(s3):.4f} "
                f"({s3.get('params')} params) vs depth 2 width {s2['widths'][0]} {_ra(s2):.4f} "
                f"({s2.get('params')} params): gain {g:+.4f}")
        if c3 is not None and c2 is not None:
            have_control = True
            gc = _ra(c3) - _ra(c2)
            tol = _spread(s3, s2, c3, c2) + MARGIN
            ok = g > tol and g - gc > tol
            text += (f"; on {control}: {_ra(c3):.4f} vs {_ra(c2):.4f}, gain {gc:+.4f}; "
                     f"tolerance {tol:.3f} -> " + ("depth helps IP beyond memorising" if ok else
                                                   "no depth gain beyond the control"))
            if ok and any(s.get("still_improving") for s in (s3, s2, c3, c2)):
                ok = None                   # a gain of speed, not of what is reached
                text += " (undecided: a net was still improving at the end of its budget)"
        else:
            ok = None
            text += f"; no {control} control at these widths: cannot isolate depth"
        detail.append(text)
        key = s3["rule"]
        if key not in last or n >= last[key][0]:
            last[key] = (n, ok)
    if not detail:
        return None
    finals = [ok for _, ok in last.values()]
    if not have_control:
        status = "undecided"
    elif any(ok for ok in finals):
        status = "holds"
    else:
        status = "undecided" if any(ok is None for ok in finals) else "fails"
    return status, detail


#: The E25 design clauses: (clause, kind of cell, detail label, what the clause says).
DESIGN_CLAUSES = (
    ("depth_gain_curriculum", "curriculum", "curriculum ip_1 -> ip_n,",
     "with the ip_j curriculum, depth 3 beats depth 2 of equal parameter count on IP beyond its "
     "gain on random labels"),
    ("depth_gain_heldout", "curriculum_heldout", "curriculum ip_1 -> ip_n, held-out quadrant,",
     "with the ip_j curriculum, depth 3 beats depth 2 of equal parameter count on IP on held-out "
     "pairs (inputs of neither party seen in training) beyond its gain on random labels"),
    ("depth_gain_and_stage", "and_stage",
     "AND stage (MAJ∘AND, then the target; depth 3's first layer frozen),",
     "after an AND stage on MAJ∘AND, depth 3 (first layer frozen) beats depth 2 of equal "
     "parameter count on IP beyond its gain on random labels"),
    ("depth_gain_and_stage_heldout", "and_stage_heldout",
     "AND stage on the training quadrant, held-out quadrant,",
     "after an AND stage on MAJ∘AND, depth 3 (first layer frozen) beats depth 2 of equal "
     "parameter count on IP on held-out pairs (inputs of neither party seen) beyond its gain on "
     "random labels"),
)


def verdict(summary, *, r2_easy: float = 0.4, hard: str = "ip", easy: str = "majand",
            control: str = "random") -> dict:
    """The verdict of a summary (:func:`summarise`; curriculum lines of kind ``"curriculum"``
    from :func:`networks.separation.curriculum.curriculum_table` may be appended).

    Returns ``{"clauses": {name: {"status", "detail", "family", "isolates_depth"}},
    "separation_shown", "shown_by", "findings", "headline", "overall", "prediction_status"}``.
    ``status`` is "holds", "fails", "undecided" (the sizes run cannot decide it) or "reported"
    (a measurement, not a proposition).  ``separation_shown`` is True only when a clause with
    ``isolates_depth`` holds; ``overall`` is the status of the prediction clauses.
    """
    cl: dict = {}
    d2 = [s for s in summary if s["kind"] == "depth2"]
    rules = list(dict.fromkeys(s["rule"] for s in d2 if not s["rule"].startswith("params(")))

    def line(target, rule, kind="depth2"):
        return {s["n"]: s for s in summary if s["kind"] == kind and s["target"] == target
                and s["rule"] == rule}

    # ---------------- expressivity
    ex = {s["n"]: s for s in summary if s["kind"] == "exact3"}
    if ex:
        bad = [n for n, s in ex.items() if s["r2_best"] is None or s["r2_best"] < 0.999]
        cl["exact_depth3"] = _clause("fails" if bad else "holds", [
            "exact depth-3 net at widths (n, n+1) on IP: " + ", ".join(
                f"n={n}: R² {ex[n]['r2_best']:.4f}" for n in sorted(ex))],
            family="expressivity", name="depth 3 computes IP exactly")
    known = []
    for rule in rules:
        fl, tr = line(hard, rule, "floor"), line(hard, rule)
        for n in sorted(set(fl) | set(tr)):
            f = float(fl[n]["floor"]) if n in fl and fl[n].get("floor") is not None else 0.0
            t = _ra(tr[n]) if n in tr else None
            best = max(f, t if t is not None else 0.0)
            src = "trained" if t is not None and t > f else "explicit IP_j floor"
            known.append(f"width {rule} n={n}: best depth-2 R²_aff known {best:.4g} ({src}; "
                         f"floor {f:.4g}" + (f", trained {t:.4g}" if t is not None else "") + ")")
    if known:
        cl["depth2_best_known"] = _clause("reported", known, family="expressivity",
                                          name="best depth-2 net known on IP")
    ceil = [f"width {s['rule']} n={s['n']}: {s['ceiling']:.3g}" for s in d2
            if s["target"] == hard and s.get("ceiling") is not None]
    cl["depth2_upper_bound"] = _clause("undecided", [
        "no proven bound limits every depth-2 net of a given width on IP at these n: the "
        "proven ceiling is per unit path norm (the sampled mode, E24), so a depth-2 net of "
        "large norm is not excluded" + ("; the neuron-wise ceiling on |ρ| of the trained nets "
                                        "themselves: " + ", ".join(ceil) if ceil else "")],
        family="expressivity", isolates_depth=True,
        name="depth 2 provably below depth 3 at this width")

    # ---------------- learnability
    gain = _depth_gain(summary, kind3="depth3", kind2="depth2", hard=hard, control=control,
                       label="trained, cold start,")
    if gain is not None:
        cl["depth_gain_trained"] = _clause(
            gain[0], gain[1], family="learnability", isolates_depth=True,
            name="trained depth 3 beats trained depth 2 of equal parameter count on IP beyond "
                 "its gain on random labels")
    # the E25 designs: depth 3 against depth 2 of equal parameter count, within one kind of cell
    for name, kind, label, what in DESIGN_CLAUSES:
        g = _depth_gain(summary, kind3=kind, kind2=kind, hard=hard, control=control, label=label)
        if g is not None:
            cl[name] = _clause(g[0], g[1], family="learnability", isolates_depth=True,
                               name=what)
    if any(s["target"] == control for s in d2) and any(s["target"] == hard for s in d2):
        parts, ok = [], True
        for rule in list(dict.fromkeys(s["rule"] for s in d2)):
            h, c = line(hard, rule), line(control, rule)
            for n in sorted(set(h) & set(c)):
                diff = abs(_ra(h[n]) - _ra(c[n]))
                tol = _spread(h[n], c[n]) + MARGIN
                ok &= diff <= tol
                parts.append(f"width {rule} n={n}: R²_aff {hard} {_ra(h[n]):.4g} vs {control} "
                             f"{_ra(c[n]):.4g} (|diff| {diff:.3g}, tolerance {tol:.3g})")
        if parts:
            cl["ip_like_random"] = _clause("holds" if ok else "fails", parts,
                                           family="learnability",
                                           name="IP is as hard as random labels for trained "
                                                "depth 2")
    if any(s["target"] == easy for s in d2) and any(s["target"] == hard for s in d2):
        parts, status = [], []
        for rule in rules:
            h, e = line(hard, rule), line(easy, rule)
            ns = sorted(set(h) & set(e))
            if not ns:
                continue
            n = ns[-1]
            tol = _spread(h[n], e[n]) + MARGIN
            status.append(_ra(e[n]) - _ra(h[n]) > tol)
            parts.append(f"width {rule}: R²_aff {easy} − {hard} " + ", ".join(
                f"n={k}: {_ra(e[k]) - _ra(h[k]):+.3g}" for k in ns))
        if parts:
            cl["target_gap_depth2"] = _clause("holds" if all(status) else "fails", parts,
                                              family="learnability",
                                              name=f"depth-2 target gap between {hard.upper()} "
                                                   f"and {easy}")
    improving = [f"{s['target']} {s['kind']} {s['rule']} n={s['n']}" for s in summary
                 if s["kind"] in ("depth2", "depth3", "curriculum", "cold", "curriculum_heldout",
                                  "cold_heldout", "and_stage", "and_stage_heldout")
                 and s["still_improving"]]
    cl["budget"] = _clause("fails" if improving else "holds",
                           ["still improving at the end of the budget: " + ", ".join(improving)]
                           if improving else ["no trained cell ended on its budget still "
                                              "improving"], family="learnability",
                           name="every trained cell converged")

    # ---------------- the prediction stated before the run
    pred = []
    if "exact_depth3" in cl:
        pred.append(cl["exact_depth3"]["status"])
    if "ip_like_random" in cl:
        pred.append(cl["ip_like_random"]["status"])
    easy_lines = [s for s in d2 if s["target"] == easy]
    if easy_lines:
        bad = [f"{s['rule']} n={s['n']}" for s in easy_lines if _ra(s) < r2_easy]
        cl["easy_learnt"] = _clause("fails" if bad else "holds",
                                    [f"R²_aff {easy} < {r2_easy} at {bad}" if bad else
                                     f"R²_aff {easy} >= {r2_easy} at every depth-2 cell run"],
                                    family="learnability", name=f"{easy} is learnt at depth 2")
        pred.append(cl["easy_learnt"]["status"])
    if "depth_gain_trained" in cl:
        st = cl["depth_gain_trained"]["status"]
        pred.append({"holds": "fails", "fails": "holds"}.get(st, st))
    overall = ("fails" if "fails" in pred else "undecided" if "undecided" in pred or not pred
               else "holds")

    shown = [k for k, c in cl.items() if c["isolates_depth"] and c["status"] == "holds"]
    findings = _findings(cl, summary, hard)
    open_ = [f"{k} undecided" for k, c in cl.items() if c["isolates_depth"]
             and c["status"] == "undecided" and k != "depth2_upper_bound"]
    if shown:
        headline = "separation shown: " + "; ".join(cl[k]["name"] for k in shown)
    elif open_:
        headline = ("depth not decided by this run: " + "; ".join(open_ + findings)
                    + " (see the clauses)")
    elif findings:
        headline = "no depth separation in this run: " + "; ".join(findings)
    else:
        headline = "nothing decided: no clause could be evaluated on this table"
    return {"clauses": cl, "separation_shown": bool(shown), "shown_by": shown,
            "findings": findings, "headline": headline, "overall": overall,
            "prediction_status": overall}


def _findings(cl, summary, hard) -> list:
    """Named outcomes other than a separation, most informative first."""
    out = []
    d3 = [s for s in summary if s["kind"] == "depth3" and s["target"] == hard]
    like_random = cl.get("ip_like_random", {}).get("status") == "holds"
    no_gain = cl.get("depth_gain_trained", {}).get("status") == "fails"
    if like_random and (no_gain or not d3):
        if d3:
            best3 = max(_ra(s) for s in d3)
            out.append(f"IP is hard to learn at both depths (as hard as random labels at depth "
                       f"2; best trained depth-3 R²_aff {best3:.3g}, no gain over depth 2 "
                       f"beyond random labels)")
        else:
            out.append("IP is as hard as random labels for trained depth 2")
    elif no_gain:
        out.append("trained depth 3 gains no more on IP than on random labels")
    if cl.get("depth_gain_curriculum", {}).get("status") == "fails":
        out.append("with the ip_j curriculum depth 3 gains no more over depth 2 on IP than on "
                   "random labels, beyond the seed spread")
    if cl.get("depth_gain_and_stage", {}).get("status") == "fails":
        out.append("after an AND stage on MAJ∘AND, depth 3 with its first layer frozen gains no "
                   "more over depth 2 on IP than on random labels")
    if cl.get("depth_gain_and_stage_heldout", {}).get("status") == "fails":
        out.append("on held-out pairs, depth 3 after the AND stage generalises IP no better "
                   "than depth 2 of equal parameter count, beyond the seed spread")
    if cl.get("depth_gain_heldout", {}).get("status") == "fails":
        out.append("on held-out pairs the curriculum's depth-3 nets generalise IP no better than "
                   "depth 2 of equal parameter count, beyond the seed spread")
    if cl.get("target_gap_depth2", {}).get("status") == "holds":
        out.append("depth-2 target gap: MAJ∘AND is learnt, IP is not")
    if cl.get("exact_depth3", {}).get("status") == "holds":
        out.append("depth 3 computes IP exactly (expressivity), no proven depth-2 bound at "
                   "these sizes")
    return out


def clause_line(name, c) -> str:
    """One printable line: status, family, whether it isolates depth, and its name."""
    iso = "isolates depth" if c.get("isolates_depth") else "does not isolate depth"
    return f"{name} [{c.get('family', '-')}, {iso}]: {c['status'].upper()} -- {c.get('name', '')}"

