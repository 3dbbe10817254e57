"""The lock file of tarball checksums (config/matrices.lock.tsv): name, SHA-256, size in bytes.

A tarball is checked against its recorded hash on every use; a new matrix's hash is recorded only
once its tarball has been extracted and converted (a corrupt download is never recorded).
`python -m membound.matrices.lock forget NAME [LOCKFILE]` drops one matrix's hash.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from membound.matrices import MatrixError
from membound.run.outputs import sha256

HEADER = ["name", "sha256", "bytes"]
DEFAULT = "config/matrices.lock.tsv"


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


def check(tarball, name: str, lockfile) -> bool:
    """Stop if `tarball` differs from `name`'s recorded hash; True if it matches, False if none is recorded."""
    known = read(lockfile).get(name)
    if known is None:
        return False
    digest = sha256(tarball)
    if known["sha256"] != digest:
        raise MatrixError(f"{tarball}: SHA-256 {digest} differs from {known['sha256']} in {lockfile}; "
                          "delete the tarball to download it again (or, if the upstream file really "
                          f"changed, run: python -m membound.matrices.lock forget {name} {lockfile})")
    return True


@contextmanager
def _locked(lockfile):
    """The lock file's rows, rewritten on exit; parallel jobs on this host take turns."""
    path = Path(lockfile)
    path.parent.mkdir(parents=True, exist_ok=True)
    guard_file = Path(tempfile.gettempdir()) / f"membound-{hashlib.sha1(str(path.resolve()).encode()).hexdigest()}.flock"
    with open(guard_file, "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        rows = read(path)
        yield rows
        tmp = path.with_name(path.name + ".part")
        with open(tmp, "w", newline="") as fh:
            writer = csv.DictWriter(fh, HEADER, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows[n] for n in sorted(rows))
        os.replace(tmp, path)


def record(tarball, name: str, lockfile) -> str:
    """Record `tarball`'s hash for `name` unless one is there (then check it). Returns the hash."""
    digest = sha256(tarball)
    with _locked(lockfile) as rows:
        if name not in rows:
            rows[name] = {"name": name, "sha256": digest, "bytes": str(os.path.getsize(tarball))}
    check(tarball, name, lockfile)
    return digest


def forget(name: str, lockfile) -> bool:
    """Drop `name`'s hash from the lock file; True if there was one."""
    with _locked(lockfile) as rows:
        return rows.pop(name, None) is not None


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] != "forget":
        sys.exit(f"usage: python -m membound.matrices.lock forget NAME [LOCKFILE (default {DEFAULT})]")
    name, lockfile = sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else DEFAULT
    print(f"{lockfile}: {name} {'forgotten' if forget(name, lockfile) else 'was not recorded'}")
