"""Progress bars that can be switched off (tqdm, imported lazily)."""

from __future__ import annotations

__all__ = ["progress_bar"]


class _NullBar:
    def update(self, n=1):
        pass

    def set_postfix(self, *args, **kwargs):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress_bar(total=None, *, enabled: bool = True, desc: str | None = None, unit: str = "it",
                 unit_scale: bool = False):
    """A tqdm bar when ``enabled`` and tqdm is installed, otherwise a no-op with the same methods.

    >>> with progress_bar(3, enabled=False) as bar:
    ...     bar.update(1)
    """
    if not enabled:
        return _NullBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return _NullBar()
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale, leave=False,
                dynamic_ncols=True)
