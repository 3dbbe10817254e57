"""Values of pure functions of membound's source kept on disk across processes (`on_disk`): every rule
of a run checks or models the same stencils, and the 2:4 form or fused support of one takes up to a
second to compute; every Snakemake start lists each rule's code: once per version of membound's source
rather than once per job.

A function's values live in CACHE/<name>/<digest>.json, where <digest> covers every .py file of the
package: any change of the code starts new files. Each value is computed where the file lacks it and
written back whole (os.replace); concurrent writers may lose each other's keys, never a value's
correctness. A read-only or damaged cache is computed through, never an error.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent      # the package membound, whose .py files make the digest
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "membound"


@functools.cache
def digest() -> str:
    """The first 20 hex digits of the SHA-256 of membound's .py files (their paths and contents)."""
    sha = hashlib.sha256()
    for path in sorted(SOURCE.rglob("*.py")):
        sha.update(f"{path.relative_to(SOURCE).as_posix()}\0".encode() + path.read_bytes())
    return sha.hexdigest()[:20]


def on_disk(name: str):
    """Decorator: keep the function's values (JSON: numbers, strings, lists) in CACHE/name/<digest>.json, keyed by its
    arguments, defaults filled in; `.file()` is that path, `.forget()` makes the next call read it anew."""
    def wrap(fn):
        signature = inspect.signature(fn)

        def file() -> Path:
            return CACHE / name / f"{digest()}.json"

        @functools.cache
        def known() -> dict:
            try:
                return json.loads(file().read_text())
            except (OSError, ValueError):   # none yet, or unreadable: computed anew
                return {}

        @functools.wraps(fn)
        def kept(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values, key = known(), " ".join(map(str, bound.arguments.values()))
            if key not in values:
                values[key] = fn(*args, **kwargs)
                try:
                    file().parent.mkdir(parents=True, exist_ok=True)
                    with tempfile.NamedTemporaryFile("w", dir=file().parent, suffix=".tmp", delete=False) as tmp:
                        json.dump(values, tmp)
                    os.replace(tmp.name, file())
                except OSError:     # a read-only cache: the value is still right, only not kept
                    pass
            return values[key]

        kept.file, kept.forget = file, known.cache_clear
        return kept
    return wrap
