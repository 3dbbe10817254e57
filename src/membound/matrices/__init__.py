"""The SpMV matrices: download, safe extraction, conversion to binary CSR, surrogates, Table 2."""


class MatrixError(ValueError):
    """A one-line, user-facing error about a matrix file that names the input and the fix."""
