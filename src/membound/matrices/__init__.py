"""The SpMV matrices: download, safe extraction, conversion to binary CSR, surrogates, Table 2."""
