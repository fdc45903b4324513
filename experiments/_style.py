"""The project's one figure style: every experiment's PNG is drawn through :func:`pyplot`.

One colour per target and one line style per depth, everywhere:

- colours name *what is approximated* (:data:`TARGET_COLOURS`): IP is always red, the easy control
  MAJ∘AND always blue, random labels always grey, ...; reference curves (the exact construction,
  a proven bound, an explicit floor) have their own colours in :data:`REFERENCE_COLOURS`;
- line styles name *the depth* (:data:`DEPTH_LINESTYLES`): depth 2 solid, depth 3 dashed;
  a proven bound or floor is dash-dotted, a construction dotted;
- markers name *how the value was obtained* (:data:`SOURCE_MARKERS`): trained (circle), exact
  construction (square), bound (none), search (triangle).

The rcParams live in ``depthsep.mplstyle`` beside this module, so a user can draw their own
figures in the same style with ``plt.style.use(experiments._style.STYLE_FILE)``.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

STYLE_FILE = Path(__file__).with_name("depthsep.mplstyle")

#: one colour per target (colour-blind-safe Okabe–Ito palette)
TARGET_COLOURS = {
    "ip": "#D55E00",         # vermillion: the hard target
    "majand": "#0072B2",     # blue: the easy control of the same shape
    "maj": "#009E73",        # bluish green
    "thr": "#CC79A7",        # reddish purple
    "parity": "#E69F00",     # orange
    "random": "#7F7F7F",     # grey: hard for every depth
    "radial": "#56B4E9",     # sky blue
    "hat": "#56B4E9",        # radial targets (E22): the cone 1 - ‖x‖,
    "cos": "#009E73",        # cos(π‖x‖)/π,
    "t4": "#CC79A7",         # SES Theorem 4's oscillating target
}
#: reference curves that are not a target's measurement
REFERENCE_COLOURS = {
    "exact": "#000000",      # the exact construction
    "bound": "#555555",      # a proven bound
    "floor": "#E69F00",      # an explicit construction's floor
}
#: one line style per depth
DEPTH_LINESTYLES = {2: "-", 3: "--", "bound": "-.", "construction": ":"}
#: one marker per way a value was obtained
SOURCE_MARKERS = {"trained": "o", "exact": "s", "search": "^", "bound": ""}
#: the names printed in legends
TARGET_NAMES = {
    "ip": "IP",
    "majand": "MAJ∘AND (easy control)",
    "maj": "majority",
    "thr": "random threshold function",
    "parity": "parity",
    "random": "random labels (hard for every depth)",
}


def target_colour(target: str) -> str:
    """The house colour of ``target`` (a fixed grey-blue for targets without one)."""
    return TARGET_COLOURS.get(str(target), "#444444")


def depth_linestyle(depth) -> str:
    """The house line style of ``depth`` (2, 3, ``"bound"`` or ``"construction"``)."""
    return DEPTH_LINESTYLES.get(depth, "-")


@contextmanager
def pyplot():
    """``matplotlib.pyplot`` on the Agg backend with the house style applied for the block.

    Examples
    --------
    >>> from experiments._style import pyplot
    >>> with pyplot() as plt:  # doctest: +SKIP
    ...     fig, ax = plt.subplots()
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.style.context(str(STYLE_FILE)):
        yield plt


def legend_below(fig, axes, *, ncol: int = 3, bottom: float = 0.0) -> int:
    """One legend for the whole figure, below the axes, each label once (its lower edge at
    figure height ``bottom``, e.g. above a caption); returns its row count."""
    handles: dict = {}
    for ax in list(axes):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if not lab.startswith("_"):
                handles.setdefault(lab, h)
    if not handles:
        return 0
    ncol = max(1, min(ncol, len(handles)))
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=ncol,
               frameon=False, bbox_to_anchor=(0.5, bottom))
    return -(-len(handles) // ncol)
