"""Running an experiment module under ``depthsep <command>``: its import (with a clear message
when a package is missing), the lock on ``--out``, and ``--json`` (the JSON files the run wrote,
gathered into one object on stdout)."""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
import tempfile
from pathlib import Path

from experiments._cli_common import EXPERIMENTS, _emit, _err, _UsageError, _version


def _out_option(argv: list):
    """The value of ``--out DIR`` / ``--out=DIR`` in ``argv`` (None if absent)."""
    for i, a in enumerate(argv):
        if a == "--":
            break
        if a == "--out" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--out="):
            return a.split("=", 1)[1]
    return None


def _import_experiment(command: str):
    module_name = EXPERIMENTS[command][0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise _UsageError(
                f"depthsep {command}: this installation has no module {module_name} "
                f"(depthsep {_version()}); the {command!r} experiment is not part of this "
                f"version. Update depthsep (pip install -e . in a current checkout)."
            ) from None
        raise _UsageError(
            f"depthsep {command}: {module_name} needs the package {exc.name!r}, which is not "
            f"installed; install the extras with pip install -e '.[plot]' (or '.[all]')"
        ) from None


def _run_experiment(command: str, argv: list, as_json: bool) -> int:
    module = _import_experiment(command)
    entry = getattr(module, "main", None)
    if entry is None:
        raise _UsageError(f"depthsep {command}: {module.__name__} has no main(argv) function")
    if any(a in ("-h", "--help") for a in argv):
        if not as_json:
            return _call_main(entry, argv)
        with contextlib.redirect_stdout(sys.stderr):
            return _call_main(entry, argv)
    with _locked_out_dir(command, _out_option(argv)):
        if not as_json:
            return _call_main(entry, argv)
        return _run_experiment_json(command, module, entry, argv)


@contextlib.contextmanager
def _locked_out_dir(command: str, out):
    """Hold an exclusive ``flock`` on the ``--out`` directory for the whole run, so two runs on
    one directory cannot mix their files; the second is refused at once with a message.  The
    lock is on the directory itself (no lock file to go stale: the kernel drops it when the
    process ends, however it ends)."""
    if out is None:
        yield
        return
    import os

    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    from circuits.utils.errors import DepthsepError

    try:
        os.makedirs(out, exist_ok=True)
        fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield  # the experiment reports the unusable --out itself
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DepthsepError(
                f"--out {out}: another depthsep run is writing to this directory; "
                f"wait for it to finish or give another --out"
            ) from None
        yield
    finally:
        os.close(fd)


def _run_experiment_json(command: str, module, entry, argv: list) -> int:
    out = _out_option(argv)
    with contextlib.ExitStack() as stack:
        if out is None:
            out = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"depthsep-{command}-"))
            argv = [*argv, "--out", out]
            kept = False
            _err(
                f"depthsep {command} --json: no --out given, so the files go to a temporary "
                f"directory that is removed at exit (the paths logged below will not exist "
                f"afterwards; their JSON is in the output); pass --out DIR to keep them"
            )
        else:
            kept = True
        root = Path(out)
        before = _json_files(root)
        with contextlib.redirect_stdout(sys.stderr):
            rc = _call_main(entry, argv)
        files = {}
        for rel, ident in sorted(_json_files(root).items()):
            if before.get(rel) == ident:
                continue  # there before this run and unchanged: not ours
            files[rel] = _read_own_json(root / rel, ident)
        _emit(
            {
                "command": command,
                "module": module.__name__,
                "argv": argv,
                "exit_code": rc,
                "out": str(root) if kept else None,
                "files": files,
            }
        )
    return rc


def _json_files(root: Path) -> dict:
    """``{relative path: (device, inode, mtime_ns, size)}`` of the regular ``*.json`` files under
    ``root``; symlinks (to files or directories) are neither listed nor followed."""
    import os
    import stat as _stat

    found = {}
    if not root.is_dir():
        return found
    for dirpath, _dirnames, filenames in os.walk(root, followlinks=False):
        for name in filenames:
            if not name.endswith(".json"):
                continue
            p = Path(dirpath) / name
            try:
                st = p.lstat()
            except OSError:
                continue
            if _stat.S_ISREG(st.st_mode):
                found[str(p.relative_to(root))] = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    return found


def _read_own_json(path: Path, ident: tuple):
    """The JSON at ``path`` if it is still the regular file ``ident`` (opened without following
    a symlink put there in the meantime); else a note saying why not."""
    import os

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return {"unreadable": f"{exc.strerror or exc}"}
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != ident[:2]:
            return {"unreadable": "replaced while being read"}
        try:
            return json.loads(fh.read(st.st_size + 1).decode("utf-8"))
        except ValueError as exc:
            return {"unreadable": str(exc)}


def _call_main(entry, argv: list) -> int:
    try:
        rc = entry(list(argv))
    except SystemExit as exc:  # argparse: 0 after --help, 2 after a usage error
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        _err(str(code))
        return 1
    return 0 if rc is None else int(rc)
