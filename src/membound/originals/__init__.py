"""The paper's original codes (DASP, EBISU, ConvStencil, LoRAStencil, Brick, BabelStream), run by the
workflow from executables the user built and named in config `originals` (docs/originals.md).
Nothing of them is part of membound: no source, no build recipe, no output file.

- codes.py: each code, where it lives, the rows it yields and its command lines;
- problems.py: what each runs (the in-house kernels' problems or the paper's Table 3), raw paths;
- check.py: the config block checked before any job runs;
- parsers.py: each code's printed output read into times, with the normalisations it needs;
- run.py: the entry point of one job (`python -m membound.originals.run`), writing raw rows;
- rows.py: what the figures, claims, Table 3 and the appendix need to tell the originals' rows apart.

This file imports nothing, so that readers of rows.py do not depend on the runner.
"""
