"""Conversion of a SuiteSparse tarball to the workflow's binary CSR, checked against Table 2."""

from __future__ import annotations

from membound.matrices import MatrixError, archive, csr, lock, mmio

NOTES = {"complex": "complex values: real part kept", "pattern": "pattern matrix: every value set to 1.0",
         "integer": "integer values stored as float64"}


def check(entry: dict, matrix, source) -> None:
    """Stop unless `matrix` has the rows and nnz of the paper's Table 2 for `entry`."""
    for what, got, want in (("rows", matrix.shape[0], entry["rows"]), ("nnz", matrix.nnz, entry["nnz"])):
        if got != want:
            raise MatrixError(f"{source}: {got} {what} but the paper's Table 2 has {want} for "
                              f"{entry['group']}/{entry['name']}; delete the tarball to download it again, "
                              "or correct config/matrices.yaml")


def convert(tarball, entry: dict, out, lockfile=None, record=None) -> None:
    """Check `tarball` against `lockfile`, read `<name>/<name>.mtx` safely, save it as CSR at `out`,
    and only then write the tarball's hash to the one-row `record` (rule matrix_lock adds it to the
    lock file: membound.matrices.lock)."""
    if lockfile is not None:
        lock.check(tarball, entry["name"], lockfile)
    matrix, head = mmio.read(archive.read_mtx(tarball, entry["name"]), f"{tarball}:{entry['name']}.mtx")
    check(entry, matrix, tarball)
    notes = "; ".join(filter(None, [NOTES.get(head.field),
                                    f"{head.symmetry} storage expanded" if head.symmetry != "general" else "",
                                    "explicit zeros kept"]))
    meta = {key: entry[key] for key in ("code", "group", "name", "kind", "symmetric", "family")}
    csr.save(out, matrix, {**meta, "source": "real", "field": head.field, "symmetry": head.symmetry,
                           "explicit_zeros": int(matrix.nnz - matrix.count_nonzero()), "notes": notes})
    if record is not None:
        lock.record(tarball, entry["name"], record)
