# The paper's figures (paper 000 Figures 2, 3-4, 6, 7, 8), one rule each. Every figure has its
# plotted numbers beside it as CSV; its caption line names the GPU, the date and (for matrices)
# REAL or SURROGATE. Each rule lists its script and every module it imports (code(), common.smk), so
# that editing one figure's code reruns that figure only.


rule fig2:
    input:
        gpu=GPU_FILE,
        code=code("scripts/fig2.py"),
    output:
        pdf=f"{RESULTS}/figures/fig2_roofline.pdf",
        png=report(f"{RESULTS}/figures/fig2_roofline.png", caption="../report/fig2.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig2_roofline.csv",
    log:
        f"{RESULTS}/logs/fig2.log",
    conda:
        "../../envs/membound.yaml"
    params:
        config={"stencil": config["stencil"], "precisions": config["precisions"]},
    script:
        "../../scripts/fig2.py"


rule fig3_4:
    input:
        raw=raw("scale"),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        gpu=GPU_FILE,
        code=code("scripts/fig3_4.py"),
    output:
        pdf=f"{RESULTS}/figures/fig3_4_breakdown.pdf",
        png=report(f"{RESULTS}/figures/fig3_4_breakdown.png", caption="../report/fig3_4.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig3_4_breakdown.csv",
    log:
        f"{RESULTS}/logs/fig3_4.log",
    conda:
        "../../envs/membound.yaml"
    params:
        precisions=config["precisions"],
    script:
        "../../scripts/fig3_4.py"


rule fig6:
    input:
        raw=raw("scale"),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        gpu=GPU_FILE,
        code=code("scripts/fig6.py"),
    output:
        pdf=f"{RESULTS}/figures/fig6_scale.pdf",
        png=report(f"{RESULTS}/figures/fig6_scale.png", caption="../report/fig6.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig6_scale.csv",
    log:
        f"{RESULTS}/logs/fig6.log",
    conda:
        "../../envs/membound.yaml"
    params:
        precisions=config["precisions"],
    script:
        "../../scripts/fig6.py"


rule fig7:
    input:
        raw=raw("spmv") + originals_raw("spmv"),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        gpu=GPU_FILE,
        code=code("scripts/fig7.py"),
    output:
        pdf=f"{RESULTS}/figures/fig7_spmv.pdf",
        png=report(f"{RESULTS}/figures/fig7_spmv.png", caption="../report/fig7.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig7_spmv.csv",
    log:
        f"{RESULTS}/logs/fig7.log",
    conda:
        "../../envs/membound.yaml"
    params:
        precisions=config["precisions"],
    script:
        "../../scripts/fig7.py"


rule fig8:
    input:
        raw=raw("stencil") + originals_raw("stencil"),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        gpu=GPU_FILE,
        code=code("scripts/fig8.py"),
    output:
        pdf=f"{RESULTS}/figures/fig8_stencil.pdf",
        png=report(f"{RESULTS}/figures/fig8_stencil.png", caption="../report/fig8.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig8_stencil.csv",
    log:
        f"{RESULTS}/logs/fig8.log",
    conda:
        "../../envs/membound.yaml"
    params:
        precisions=config["precisions"],
    script:
        "../../scripts/fig8.py"


# GEMV, the fourth family (no figure of the paper): rendered where GEMV rows exist (the committed
# reference run has none), see rule all.
rule fig_gemv:
    input:
        raw=raw("gemv"),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        gpu=GPU_FILE,
        code=code("scripts/fig_gemv.py"),
    output:
        pdf=f"{RESULTS}/figures/gemv.pdf",
        png=report(f"{RESULTS}/figures/gemv.png", caption="../report/fig_gemv.rst", category="Figures"),
        csv=f"{RESULTS}/figures/gemv.csv",
    log:
        f"{RESULTS}/logs/fig_gemv.log",
    conda:
        "../../envs/membound.yaml"
    params:
        precisions=config["precisions"],
    script:
        "../../scripts/fig_gemv.py"


# Figures 2, 6, 7, 8 and the claims across devices, the paper's stacked layout: under the reference
# profile every GPU it renders (part of its `all`); under any other profile every profile whose files
# exist (render each profile first, then `snakemake --profile <any> compare`).
COMPARED = {
    "fig2_roofline": "figures/fig2_roofline.csv",
    "fig6_scale": "figures/fig6_scale.csv",
    "fig7_spmv": "figures/fig7_spmv.csv",
    "fig8_stencil": "figures/fig8_stencil.csv",
    "claims": "claims.json",
}


rule compare:
    input:
        **{key: compared(name) for key, name in COMPARED.items()},
        code=code("scripts/compare.py"),
    output:
        **{
            f"{key}_{ext}": f"results/compare/{key}.{ext}"
            for key in COMPARED
            if key != "claims"
            for ext in ("pdf", "png")
        },
        claims=multiext("results/compare/claims", ".csv", ".md"),
    log:
        "results/compare/compare.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/compare.py"
