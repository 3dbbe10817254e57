# The machine inventory (GPUs, toolkits, CPU, memory, OS, package versions, git commit), taken on
# the machine that runs the benchmarks: not a localrule, so a cluster run takes it on a compute node.


rule inventory:
    output:
        f"{RESULTS}/raw/inventory.json",
    log:
        f"{RESULTS}/logs/inventory.log",
    conda:
        "../../envs/membound.yaml"
    params:
        repo=workflow.basedir,  # the checkout whose git commit is recorded
    script:
        "../../scripts/inventory.py"
