"""Running the workflow: its configuration, the device detection and profiles, the machine
inventory and run-info, the one timing and row place (measure.py), atomic outputs and the code a
rule depends on (codedeps.py)."""
