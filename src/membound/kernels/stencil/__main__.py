"""python -m membound.kernels.stencil: the family's benchmark CLI (main in its package)."""

from membound.kernels.stencil import main
from membound.run.measure import guarded

guarded(main)
