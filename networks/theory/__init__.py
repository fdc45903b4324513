"""THEORY.md §5's experiment table as library checks: one function per row, each comparing what
depthsep measures with what THEORY expects.

A row is registered in :data:`ROWS` (id -> :class:`Row`: object, expected, check); ``check(ctx)``
takes a :class:`Context` (quick or full sizes, seed, shared trained runs) and returns a dict with
``measured``, ``ok`` and optionally ``note``, ``worst_ratio``, ``expected_value``.
:func:`run_rows` runs a selection and turns a crashing row into a failing one.  Expected values
come from :mod:`networks.theory.reference` (THEORY's formulas and quoted numbers).

Rows by module: :mod:`~networks.theory.cube` (E1–E4, E18, E19),
:mod:`~networks.theory.embedding` (E5–E7), :mod:`~networks.theory.reduction` (E8–E11),
:mod:`~networks.theory.constructions` (E12–E17).  E20 (the memorisation curve, superseded by
E21/E22) is measured by :mod:`networks.separation.memorisation`, not here.  The command line is ``experiments/theory_table.py``.

Examples
--------
>>> from networks import theory
>>> rows = theory.run_rows(["E19"], theory.Context())
>>> rows[0]["id"], rows[0]["verdict"], rows[0]["measured"].split(";")[0]
('E19', 'ok', 'minima {2: 2, 3: 3}')
"""

from networks.theory import reference
from networks.theory._table import ROWS, Context, Row, ratio, row, run_rows, select_rows
from networks.theory import constructions, cube, embedding, reduction  # noqa: F401  (register rows)

# THEORY's order, whatever the import order of the row modules
_ORDER = [f"E{i}" for i in range(1, 21)]
for _id in sorted(ROWS, key=lambda i: _ORDER.index(i) if i in _ORDER else len(_ORDER)):
    ROWS[_id] = ROWS.pop(_id)
del _id

__all__ = ["ROWS", "Row", "Context", "row", "run_rows", "select_rows", "ratio", "reference"]
