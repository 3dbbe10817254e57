"""The tensor-core SpMV's plans of one matrix, made once (rule spmv_plans, this module's CLI) beside its
CSR file and read by every SpMV job (`load`, which checks that they belong to the matrix): a plan
(spmv_plan.py) depends on the row pointers alone, and it is never timed."""

from __future__ import annotations

import argparse
import hashlib
from dataclasses import fields
from pathlib import Path

import numpy as np

from membound.kernels.spmv.tc_plan import Plan, plan, slots_per_lane
from membound.matrices import csr
from membound.model.precision import PRECISIONS
from membound.run.outputs import atomic

SLOTS = tuple(dict.fromkeys(slots_per_lane(p) for p in PRECISIONS))   # the S of every precision


def digest(indptr) -> str:
    """SHA-256 of the row pointers (as int64), which a plan is a function of."""
    return hashlib.sha256(np.ascontiguousarray(indptr, dtype=np.int64).tobytes()).hexdigest()


def save(path, indptr) -> None:
    """The plans of the row pointers `indptr` for every S in SLOTS, in one .npz at `path` (atomically),
    with their digest."""
    arrays = {f"s{s}_{f.name}": np.asarray(getattr(p, f.name)) for s in SLOTS
              for p in [plan(indptr, s)] for f in fields(Plan)}
    with atomic(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, digest=np.array(digest(indptr)), **arrays)


def load(path, indptr) -> dict[int, Plan]:
    """The plans by S that `save` wrote at `path`, or ValueError naming the file where they were made
    from other row pointers than `indptr`."""
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such SpMV plans file; make it with rule spmv_plans")
    with np.load(path, allow_pickle=False) as f:
        if str(f["digest"]) != digest(indptr):
            raise ValueError(f"{path}: these SpMV plans were made from another matrix's row pointers; "
                             "delete the file and rerun rule spmv_plans")
        stored = {key: f[key] for key in f.files}
    return {s: Plan(**{fl.name: (v.item() if v.ndim == 0 else v) for fl in fields(Plan)
                       for v in [stored[f"s{s}_{fl.name}"]]}) for s in SLOTS}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="The tensor-core SpMV's plans of one CSR matrix, every precision.")
    parser.add_argument("--matrix", required=True, help="CSR file (membound.matrices.csr format)")
    parser.add_argument("--out", required=True, help="the plans' .npz")
    args = parser.parse_args(argv)
    save(args.out, csr.load(args.matrix)[0].indptr)


if __name__ == "__main__":
    main()
