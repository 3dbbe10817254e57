"""The CUDA-core stencil kernels' tiles: each kernel's base tile (code), and per GPU the tiles measured
best (data: kernels/stencil/tuned/<gpu>.yaml, checked against tiles.schema.yaml); stencil/plan.py
decides and checks, docs/kernels_stencil.md says why.

Tile keys are the kernels' compile-time macros (the .cu headers say what each means), and `kernel`, the .cu
file: stencil_cc (2D, a tile plus halo per block: BX x BY output tile, V points per thread along y, TPB tiles
per block along y, VEC 16-byte copies, VS the sums in vector strips, NOWRAP the interior tiles copied without
the wrap), stencil_tb2 (2D, streaming along y: NT columns, chunks of CH rows, PF chunks in flight, OWNREG a
thread's own column in registers, WAVES waves of blocks over the field), stencil_cc3 (3D at depth 1, a ring of
planes; VEC and VS as stencil_cc), stencil_tb3 (3D, streaming along z: BX x BY x BZ per block), stencil_stream
(2D and 3D at depth 1, streaming with the sums in registers: NTX threads along x of UV 16-byte vectors each,
BY rows in 3D, VY of them a thread, chunks of CH slices, CPY the copies (0 cp.async, 1 the same through L1, 2
staged in registers), PF chunks in flight, WAVES waves of blocks, BAL 1 the field cut into equal runs of slices
across column and row blocks, one a block); stencil_cc3's PF: planes in flight by
cp.async (0: one, through registers), stencil_tb3's VEC and PF: its input planes in 16-byte copies, PF in
flight; MINB minimum blocks per SM (0: the compiler's choice), WSMEM weights in shared memory.

TUNED[gpu][(dims, shape, radius, depth)], gpu a profile name (config/gpus/<gpu>.yaml): the best checked
variant of `tools/sweep_depths.py --tiles` on that GPU at 10240^2 / 512^3, which `--apply` writes into
tuned/<gpu>.yaml (`apply`); a key with a fifth item, the element size in bytes (8, 4, 2: fp64, fp32, fp16),
holds the tile of that precision where the precisions' best tiles differ. An entry of the YAML is that key
(`elem` optional), the tile as its kernel and the macros that differ from the kernel's base tile, and a
note (what it gained, when, by which sweep).
"""

from __future__ import annotations

import math
from pathlib import Path

import jsonschema
import yaml

from membound.run.config import read_yaml

CC2 = dict(kernel="stencil_cc", BX=64, BY=32, BZ=1, V=8, NTHREADS=256, TPB=1, MINB=0, WSMEM=0, VEC=0, VS=0, NOWRAP=0)
CC3 = dict(kernel="stencil_cc3", BX=32, BY=64, BZ=32, V=8, NTHREADS=256, MINB=0, WSMEM=0, VEC=0, VS=0, PF=0)
TB2 = dict(kernel="stencil_tb2", NT=256, CH=4, PF=1, OWNREG=1, MINB=0, WSMEM=0, WAVES=1)
TB3 = dict(kernel="stencil_tb3", BX=32, BY=32, BZ=128, V=4, NTHREADS=512, MINB=0, WSMEM=0, VEC=0, PF=1)
ST = dict(kernel="stencil_stream", NTX=64, UV=1, BY=1, VY=1, CH=3, PF=2, CPY=0, MINB=0, WAVES=1, BAL=0)
BASES = {"CC2": CC2, "CC3": CC3, "TB2": TB2, "TB3": TB3, "ST": ST}
BY_KERNEL = {b["kernel"]: b for b in BASES.values()}
TUNED_DIR = Path(__file__).with_name("tuned")
SCHEMA = Path(__file__).with_name("tiles.schema.yaml")
KEY = ("dims", "shape", "radius", "depth", "elem")


def diff(tile: dict) -> dict:
    """`tile` as an entry holds it: its kernel and the macros that differ from that kernel's base tile."""
    base = BY_KERNEL[tile["kernel"]]
    return {"kernel": tile["kernel"], **{k: v for k, v in tile.items() if k != "kernel" and base[k] != v}}


def expand(short: dict, where: str = "a tile") -> dict:
    """The whole tile of an entry's `short` form (diff): its kernel's base tile with the macros given;
    ValueError naming `where` for a macro the kernel does not have."""
    base = BY_KERNEL[short["kernel"]]
    if unknown := sorted(set(short) - set(base)):
        raise ValueError(f"{where}: {short['kernel']} has no macro {', '.join(unknown)} (its macros: "
                         f"{', '.join(k for k in base if k != 'kernel')})")
    return {**base, **short}


def read(path: Path) -> list[dict]:
    """The entries of one tuned/<gpu>.yaml, checked against the schema (ValueError naming the file)."""
    data = read_yaml(path)
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(read_yaml(SCHEMA)).iter_errors(data))
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "the top level"
        raise ValueError(f"{path}: {where}: {error.message} (see {SCHEMA.name})")
    return data["tiles"]


def key_of(entry: dict) -> tuple:
    """The TUNED key of an entry: (dims, shape, radius, depth[, elem])."""
    return tuple(entry[k] for k in KEY if k in entry)


def load(path: Path) -> dict[tuple, dict]:
    """TUNED of one GPU: each entry's key -> its whole tile; ValueError for a key given twice."""
    out = {}
    for i, entry in enumerate(read(path)):
        key = key_of(entry)
        if key in out:
            raise ValueError(f"{path}: tiles/{i}: the key {key} has an entry before; keep one")
        out[key] = expand(entry["tile"], f"{path}: tiles/{i}")
    return out


def entry(key: tuple, tile: dict, note: str) -> dict:
    """One entry of a tuned/<gpu>.yaml: `key` (dims, shape, radius, depth[, elem]), `tile` and `note`."""
    return {**dict(zip(KEY, key)), "tile": diff(tile), "note": note}


def write(path: Path, entries: list[dict]) -> None:
    """tuned/<gpu>.yaml with `entries`, one a line, in their order."""
    lines = [yaml.safe_dump(e, default_flow_style=True, sort_keys=False, width=math.inf).strip() for e in entries]
    path.write_text(f"# The CUDA-core stencil tiles measured best on {path.stem} (kernels/stencil/tiles.py; "
                    "written by tools/sweep_depths.py --apply)\ntiles:\n" + "".join(f"  - {line}\n" for line in lines))


def apply(path: Path, found: list[dict]) -> None:
    """Put the entries `found` into tuned/<gpu>.yaml at `path` (made where missing): each replaces the
    entry of its key, or comes after the others."""
    entries = read(path) if path.is_file() else []
    keys = {key_of(e): i for i, e in enumerate(entries)}
    for e in found:
        if key_of(e) in keys:
            entries[keys[key_of(e)]] = e
        else:
            keys[key_of(e)] = len(entries)
            entries.append(e)
    write(path, entries)
    load(path)


TUNED = {path.stem: load(path) for path in sorted(TUNED_DIR.glob("*.yaml"))}
