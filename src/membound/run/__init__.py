"""Running the workflow: its configuration, the device detection and profiles, the machine
inventory and run-info, the one timing and row place (measure.py), atomic outputs, the code a
rule depends on (codedeps.py), the node's GPUs and one job per GPU (devices.py, gpu_slot.py) and
the run's progress (progress.py)."""
