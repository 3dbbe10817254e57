"""python -m membound.kernels.scale: the family's benchmark CLI (main in its package)."""

from membound.kernels.scale import main
from membound.run.measure import guarded

guarded(main)
