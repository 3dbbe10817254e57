"""The lock file of tarball checksums (config/matrices.lock.tsv): name, SHA-256, size in bytes.

A tarball is checked against its recorded hash on every use. A new matrix's hash is recorded only
once its tarball has been extracted and converted, in two steps that stay safe on a shared file
system with jobs on many nodes: each conversion writes its own one-row record (`record`), and one
rule on the node that runs snakemake (`matrix_lock`, a localrule) merges the records into the lock
file (`collect`), so the lock file has one writer.
`python -m membound.matrices.lock forget NAME [LOCKFILE]` drops one matrix's hash.
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

from membound.matrices import MatrixError
from membound.run.outputs import atomic, sha256

HEADER = ["name", "sha256", "bytes"]
DEFAULT = "config/matrices.lock.tsv"


def read(lockfile) -> dict[str, dict]:
    """The rows of a lock file or record by matrix name (empty when the file does not exist)."""
    path = Path(lockfile)
    if not path.is_file():
        return {}
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        if reader.fieldnames != HEADER:
            raise MatrixError(f"{lockfile}: columns must be {', '.join(HEADER)}; restore it from git "
                              "(a record under data/: delete it and rerun)")
        return {row["name"]: row for row in reader}


def write(rows: dict[str, dict], path) -> None:
    """Write `rows` (by name) to `path` in one replace, sorted by name."""
    with atomic(path, ".part") as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, HEADER, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows[n] for n in sorted(rows))


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


def record(tarball, name: str, out) -> str:
    """Write `tarball`'s hash and size for `name` to the one-row record `out`. Returns the hash."""
    digest = sha256(tarball)
    write({name: {"name": name, "sha256": digest, "bytes": str(os.path.getsize(tarball))}}, out)
    return digest


def collect(records, lockfile) -> dict[str, dict]:
    """Merge the one-row `records` into `lockfile`; a hash already there is kept, and a record that
    differs from it stops with both. Returns the records' rows."""
    rows, merged = read(lockfile), {}
    for path in records:
        for name, row in read(path).items():
            if rows.setdefault(name, row)["sha256"] != row["sha256"]:
                raise MatrixError(f"{path}: SHA-256 {row['sha256']} of {name} differs from {rows[name]['sha256']} "
                                  f"in {lockfile}; delete {path} and rerun (or, if the upstream file really "
                                  f"changed, run: python -m membound.matrices.lock forget {name} {lockfile})")
            merged[name] = row
    if rows != read(lockfile) or not Path(lockfile).is_file():
        write(rows, lockfile)
    return merged


def forget(name: str, lockfile) -> bool:
    """Drop `name`'s hash from the lock file; True if there was one."""
    rows = read(lockfile)
    if rows.pop(name, None) is None:
        return False
    write(rows, lockfile)
    return True


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] != "forget":
        sys.exit(f"usage: python -m membound.matrices.lock forget NAME [LOCKFILE (default {DEFAULT})]")
    name, lockfile = sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else DEFAULT
    print(f"{lockfile}: {name} {'forgotten' if forget(name, lockfile) else 'was not recorded'}")
