"""membound: the reproduction workflow for Zhang et al., "Can Tensor Cores Benefit
Memory-Bound Kernels? (NO!)", GPGPU '25.

Subpackages and modules hold the logic; the Snakemake rules under workflow/ only wire files to
them.
"""

__version__ = "1.0.0"
