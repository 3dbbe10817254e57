"""Analysis of the raw rows: achieved against analytical W, Q, I (wqi.py), Table 3 and the
paper's claims."""
