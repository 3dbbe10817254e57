"""The model: the papers' equations (equations.py), stencil geometry, the precision formats, the
analytical W and Q of a benchmark row, and the platforms' Table 1 and bounds. Imports nothing of
membound outside this package (docs/architecture.md)."""
