# The paper's figures (paper 000 Figures 2, 3-4, 6, 7, 8), one rule each. Every figure has its
# plotted numbers beside it as CSV; its caption line names the GPU, the date and (for matrices)
# REAL or SURROGATE. Plot code: src/membound/plots/<rule>.py plus the shared modules PLOTS_SHARED,
# listed as inputs so that editing one figure's code reruns that figure only.

PLOTS = "src/membound/plots"
PLOTS_SHARED = [f"{PLOTS}/common.py", f"{PLOTS}/style.py"]


rule fig2:
    input:
        gpu=GPU_FILE,
        code=[f"{PLOTS}/fig2.py", *PLOTS_SHARED],
    output:
        pdf=f"{RESULTS}/figures/fig2_roofline.pdf",
        png=report(f"{RESULTS}/figures/fig2_roofline.png", caption="../report/fig2.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig2_roofline.csv",
    log:
        f"{RESULTS}/logs/fig2.log",
    conda:
        "../../envs/membound.yaml"
    params:
        config={"stencil": config["stencil"]},
    script:
        "../../scripts/fig2.py"


rule fig3_4:
    input:
        raw=f"{RESULTS}/raw/scale.csv",
        gpu=GPU_FILE,
        code=[f"{PLOTS}/fig3_4.py", *PLOTS_SHARED],
    output:
        pdf=f"{RESULTS}/figures/fig3_4_breakdown.pdf",
        png=report(f"{RESULTS}/figures/fig3_4_breakdown.png", caption="../report/fig3_4.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig3_4_breakdown.csv",
    log:
        f"{RESULTS}/logs/fig3_4.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/fig3_4.py"


rule fig6:
    input:
        raw=f"{RESULTS}/raw/scale.csv",
        gpu=GPU_FILE,
        code=[f"{PLOTS}/fig6.py", *PLOTS_SHARED],
    output:
        pdf=f"{RESULTS}/figures/fig6_scale.pdf",
        png=report(f"{RESULTS}/figures/fig6_scale.png", caption="../report/fig6.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig6_scale.csv",
    log:
        f"{RESULTS}/logs/fig6.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/fig6.py"


rule fig7:
    input:
        raw=[f"{RESULTS}/raw/spmv/{m['name']}.csv" for m in SPMV_MATRICES],
        gpu=GPU_FILE,
        code=[f"{PLOTS}/fig7.py", *PLOTS_SHARED, "src/membound/matrices/table2.py"],
    output:
        pdf=f"{RESULTS}/figures/fig7_spmv.pdf",
        png=report(f"{RESULTS}/figures/fig7_spmv.png", caption="../report/fig7.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig7_spmv.csv",
    log:
        f"{RESULTS}/logs/fig7.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/fig7.py"


rule fig8:
    input:
        raw=[f"{RESULTS}/raw/stencil/{s}.csv" for s in config["stencil"]["kernels"]],
        gpu=GPU_FILE,
        code=[f"{PLOTS}/fig8.py", *PLOTS_SHARED],
    output:
        pdf=f"{RESULTS}/figures/fig8_stencil.pdf",
        png=report(f"{RESULTS}/figures/fig8_stencil.png", caption="../report/fig8.rst", category="Figures"),
        csv=f"{RESULTS}/figures/fig8_stencil.csv",
    log:
        f"{RESULTS}/logs/fig8.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/fig8.py"


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
        code=[f"{PLOTS}/{m}.py" for m in ("compare", "fig2", "fig6", "fig7", "fig8")] + PLOTS_SHARED,
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
