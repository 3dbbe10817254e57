# Every kernel family's benchmarks, one rule over the registry (membound.families): a job runs
# `python -m membound.kernels.<family>` on one case (per-case families: raw/<family>/<case>.csv, else
# raw/<family>.csv) and one repetition, with the family's problem arguments (families.cli_args) and
# its config block's warmup and reps. A family adds no rule; `bench_<family>` names its jobs as a target.


rule bench:
    input:
        unpack(bench_inputs),
    output:
        f"{RESULTS}/raw/{{family}}{{case}}{{rep}}.csv",
    log:
        f"{RESULTS}/logs/bench_{{family}}{{case}}{{rep}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_{{family}}{{case}}{{rep}}.tsv"
    wildcard_constraints:
        family=FAMILY_NAMES,
        case=CASE_SUFFIX,
        rep=families.REP_SUFFIX,
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend=BACKEND,
        args=bench_args,
        rep=lambda wc: families.rep_index(wc.rep),
        warmup=lambda wc: config[wc.family]["warmup"],
        reps=lambda wc: config[wc.family]["reps"],
    shell:
        "python -m membound.kernels.{wildcards.family} --backend {params.backend} {params.args} --rep {params.rep}"
        " --warmup {params.warmup} --reps {params.reps} --out {output} > {log} 2>&1"


for _family in FAMILY:  # short targets: `snakemake --profile <gpu> bench_spmv` runs SpMV's jobs

    rule:
        name:
            f"bench_{_family}"
        input:
            raw(_family),
