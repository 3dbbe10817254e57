# The paper's original codes (DASP, EBISU, ConvStencil, LoRAStencil, Brick, BabelStream), run from the
# executables config `originals` names (docs/originals.md): one job per code, case and repetition,
# writing raw/originals/<code>/<case>.csv and its run record (.json). The figures, the claims, Table 3
# and the appendix read them through originals_raw() (registry.smk); without codes nothing changes.
import re

if ORIGINAL_JOBS and MEASURES:

    rule original:
        input:
            executable=lambda wc: originals.executable(config, wc.code, wc.case)[0],  # a rebuilt binary reruns
            matrix=lambda wc: csr_file(wc.case) if wc.code == "dasp" else [],
            code=code("membound.originals.run", "membound.run.gpu_slot"),
        output:
            rows=originals.raw(RESULTS, "{code}", "{case}", "{rep}"),
            record=originals.raw(RESULTS, "{code}", "{case}", "{rep}", "json"),
        log:
            f"{RESULTS}/logs/originals/{{code}}/{{case}}{{rep}}.log",
        benchmark:
            f"{RESULTS}/raw/benchmarks/original_{{code}}-{{case}}{{rep}}.tsv"
        wildcard_constraints:
            code="|".join(CODES),
            case="|".join(sorted({re.escape(case) for _, case in ORIGINAL_JOBS})),
            rep=families.REP_SUFFIX,
        conda:
            "../../envs/membound.yaml"
        resources:
            gpu=1,
        params:
            backend=BACKEND,
            args=lambda wc: originals.cli_args(config, wc.code, wc.case),
            matrix=lambda wc, input: f"--matrix {input.matrix}" if input.matrix else "",
            rep=lambda wc: families.rep_index(wc.rep),
            scratch=lambda wc: f"{RESULTS}/tmp/originals/{wc.code}-{wc.case}{wc.rep}",
        shell:
            "python -m membound.run.gpu_slot -- python -m membound.originals.run --backend {params.backend} {params.args}"
            " {params.matrix}"
            " --rep {params.rep} --scratch {params.scratch:q} --out {output.rows:q} --record {output.record:q}"
            " > {log:q} 2>&1"
