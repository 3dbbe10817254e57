# Every kernel family's benchmarks, one rule over the registry (membound.families): a job runs every
# case of one family in one process (membound.kernels.batch; per case its problem arguments,
# families.cli_args) for one repetition, with its config block's warmup and reps, on a GPU of its own
# (membound.run.gpu_slot), into raw/<family>.csv (repetition r: raw/<family>.rep<r>.csv). A family adds
# no rule; `bench_<family>` names its jobs as a target. docs/performance.md says why.


rule bench:
    input:
        unpack(bench_inputs),
    output:
        f"{RESULTS}/raw/{{family}}{{rep}}.csv",
    log:
        f"{RESULTS}/logs/bench_{{family}}{{rep}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_{{family}}{{rep}}.tsv"
    wildcard_constraints:
        family=FAMILY_NAMES,
        rep=families.REP_SUFFIX,
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend=BACKEND,
        cases=bench_args,
        rep=lambda wc: families.rep_index(wc.rep),
        warmup=lambda wc: config[wc.family]["warmup"],
        warmup_s=lambda wc: config[wc.family].get("warmup_s", 0),
        reps=lambda wc: config[wc.family]["reps"],
    shell:
        "python -m membound.run.gpu_slot -- python -m membound.kernels.batch {wildcards.family} --out {output}"
        " --backend {params.backend} --rep {params.rep} --warmup {params.warmup} --warmup-s {params.warmup_s}"
        " --reps {params.reps} {params.cases} > {log} 2>&1"


for _family in FAMILY:  # short targets: `snakemake --profile <gpu> bench_spmv` runs SpMV's jobs

    rule:
        name:
            f"bench_{_family}"
        input:
            raw(_family),
