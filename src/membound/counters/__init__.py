"""Hardware counters: what the GPU actually did (FLOPs, bytes, time) per measured kernel launch.

ncu.py runs a benchmark CLI under Nsight Compute and parses its CSV; rocprof.py writes rocprof's
counter input and parses rocprof v1 and rocprofv3 CSVs; dgemm.py is the DGEMM of known size that
checks what one unit of the FP64 tensor-core counter is worth.
"""
