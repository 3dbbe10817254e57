"""python -m membound.kernels.spmv: the family's benchmark CLI (main in its package)."""

from membound.kernels.spmv import main
from membound.run.measure import guarded

guarded(main)
