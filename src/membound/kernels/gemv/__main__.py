"""python -m membound.kernels.gemv: the family's benchmark CLI (main in its package)."""

from membound.kernels.gemv import main
from membound.run.measure import guarded

guarded(main)
