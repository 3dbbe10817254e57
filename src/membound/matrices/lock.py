"""The lock file of tarball checksums (config/matrices.lock.tsv): name, SHA-256, size in bytes.

A tarball's hash is recorded the first time it is downloaded and checked on every later use.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

from membound.matrices import MatrixError
from membound.outputs import sha256

HEADER = ["name", "sha256", "bytes"]


def read(lockfile) -> dict[str, dict]:
    """The lock file's rows by matrix name (empty when the file does not exist)."""
    path = Path(lockfile)
    if not path.is_file():
        return {}
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if rows and set(rows[0]) != set(HEADER):
        raise MatrixError(f"{lockfile}: columns must be {', '.join(HEADER)}; restore it from git")
    return {row["name"]: row for row in rows}


def verify(tarball, name: str, lockfile) -> str:
    """Check `tarball` against the lock file; record it there if `name` is new. Returns its hash."""
    digest, size = sha256(tarball), os.path.getsize(tarball)
    path = Path(lockfile)
    path.parent.mkdir(parents=True, exist_ok=True)
    guard_file = Path(tempfile.gettempdir()) / f"membound-{hashlib.sha1(str(path.resolve()).encode()).hexdigest()}.flock"
    with open(guard_file, "w") as guard:  # parallel jobs on this host record one at a time
        fcntl.flock(guard, fcntl.LOCK_EX)
        rows = read(path)
        known = rows.get(name)
        if known is not None:
            if known["sha256"] != digest:
                raise MatrixError(f"{tarball}: SHA-256 {digest} differs from {known['sha256']} in {lockfile}; "
                                  "delete the tarball to download it again (or fix the lock file if the "
                                  "upstream file really changed)")
            return digest
        rows[name] = {"name": name, "sha256": digest, "bytes": str(size)}
        tmp = path.with_name(path.name + ".part")
        with open(tmp, "w", newline="") as fh:
            writer = csv.DictWriter(fh, HEADER, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows[n] for n in sorted(rows))
        os.replace(tmp, path)
    return digest
