"""The end of an experiment's run, shared by the table commands (separate, its --curriculum mode,
ceiling, radial, least-circuit --catalogue, separation-table, the reduction table): the JSON
record and the figures written into the output folder, each path printed, a failed write
reported instead of raised; and the line an interrupted run leaves."""

from __future__ import annotations

import sys
from pathlib import Path


def write_record(record, out, *, name: str, what: str, figures=None) -> bool:
    """Write ``record`` to ``<out>/<name>`` (atomic JSON), then, unless ``figures`` is None, call
    ``figures()`` (it returns the path of the figure written, or a list of them); print every
    path written.  Print the results before calling this: a failed write (``what`` names the
    files) is reported on stderr and gives False (:func:`circuits.utils.cli.save_or_report`;
    exit with ``EXIT_NOT_SAVED``), True when all is written."""
    from circuits.utils.cli import save_or_report
    from circuits.utils.files import write_json_atomic

    out = Path(out)

    def write():
        print(f"wrote {write_json_atomic(out / name, record)}")
        if figures is not None:
            made = figures()
            for path in made if isinstance(made, list) else [made]:
                print(f"wrote {path}")

    return save_or_report(write, what=what, where=out)


def run_table(args, run, table, *, name: str, figures, what: "str | None" = None,
              resume: "str | None" = None) -> int:
    """A table command from its parsed options ``args`` to its exit status: ``record =
    run(args)``, ``table(record)`` printed, then (:func:`write_record`) ``<name>.json`` and,
    unless ``args.no_plot``, the figures ``figures(record, out)`` draws into ``out = args.out``
    (``what`` names the files written: default ``<name>.json and <name>.png``); a failed write
    gives ``EXIT_NOT_SAVED``, else the run's time is the last line and the status 0.  With a
    resume file (``resume``, under ``out``) a Ctrl-C during the run gives :func:`interrupted`
    and the last line also says how many cells came from that file."""
    from circuits.utils.cli import EXIT_NOT_SAVED

    out = Path(args.out)
    try:
        record = run(args)
    except KeyboardInterrupt:
        if resume is None:
            raise
        return interrupted(out / resume)
    print(table(record))                       # the results first: a failed write loses nothing
    if not write_record(record, out, name=f"{name}.json", what=what or f"{name}.json and {name}.png",
                        figures=None if args.no_plot else lambda: figures(record, out)):
        return EXIT_NOT_SAVED
    total = f"total {record['seconds']:.1f} s"
    if resume is not None:
        total += f" ({record['resumed']} of {record['cells']} cells from the resume file)"
    print(total)
    return 0


def record_and_figure(record, json_path, figure, png_path) -> int:
    """Write ``record`` to ``json_path`` (atomic JSON; its path printed on stderr), then call
    ``figure(png_path)``, each whether or not the other failed; a failed write is reported on
    stderr (:func:`circuits.utils.cli.save_or_report`).  Returns the exit status: 0, or
    ``EXIT_NOT_SAVED`` when either write failed."""
    from circuits.utils.cli import EXIT_NOT_SAVED, save_or_report
    from circuits.utils.files import write_json_atomic

    status = 0
    if save_or_report(lambda: write_json_atomic(json_path, record), what="the JSON record",
                      where=json_path):
        print(f"wrote {json_path}", file=sys.stderr)
    else:
        status = EXIT_NOT_SAVED
    if not save_or_report(lambda: figure(png_path), what="the figure", where=png_path):
        status = EXIT_NOT_SAVED
    return status


def interrupted(resume) -> int:
    """Say where the finished cells of an interrupted run are kept (the resume file ``resume``)
    and how to continue; the exit status of a run ended by Ctrl-C, 130."""
    print(f"interrupted: finished cells are kept in {resume}; run the same command again to "
          f"continue", file=sys.stderr)
    return 130
