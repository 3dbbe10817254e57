# The paper's figures (paper 000 Figures 2, 3-4, 6, 7, 8), one rule each. Every figure has its
# plotted numbers beside it as CSV; its caption line names the GPU, the date and (for matrices)
# REAL or SURROGATE. Each rule lists its script and every module it imports (code(), common.smk), so
# that editing one figure's code reruns that figure only.
from membound.analysis.claims.verdicts import METHOD as CLAIMS_INTERVAL


rule fig2:
    input:
        gpu=GPU_FILE,
        code=code("scripts/fig2.py"),
    output:
        pdf=f"{RESULTS}/figures/fig2_roofline.pdf",
        png=report(f"{RESULTS}/figures/fig2_roofline.png", caption="../report/fig2.rst", **IN_FIGURES),
        csv=f"{RESULTS}/figures/fig2_roofline.csv",
    log:
        f"{RESULTS}/logs/fig2.log",
    conda:
        "../../envs/membound.yaml"
    params:
        config={"stencil": config["stencil"], "precisions": config["precisions"]},
    script:
        "../../scripts/fig2.py"


# The measured figures: rule name -> (plot module membound.plots.<module>, output name, raw CSVs,
# the plot's own options).
# Each is a rule of that name (`snakemake ... fig8` reruns Figure 8 alone) running scripts/figure.py
# with its module; GEMV, the fourth family (no figure of the paper), where GEMV rows exist (the
# committed reference run has none, see rule all).
MEASURED_FIGURES = {
    "fig3_4": ("fig3_4", "fig3_4_breakdown", raw("scale"), {}),
    "fig6": ("fig6", "fig6_scale", raw("scale"), {}),
    "fig7": ("fig7", "fig7_spmv", raw("spmv") + originals_raw("spmv"), {}),
    # the bars at the stencils' role depths (C4's equal depth)
    "fig8": (
        "fig8",
        "fig8_stencil",
        raw("stencil") + originals_raw("stencil"),
        {"stencils": config["stencil"]["kernels"]},
    ),
    "fig_gemv": ("gemv", "gemv", raw("gemv"), {}),
}

for figure_rule, (plot_module, figure_name, figure_raw, plot_options) in MEASURED_FIGURES.items():

    rule:
        name:
            figure_rule
        input:
            raw=figure_raw,
            checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
            gpu=GPU_FILE,
            code=code("scripts/figure.py", f"membound.plots.{plot_module}"),
        output:
            pdf=f"{RESULTS}/figures/{figure_name}.pdf",
            png=report(f"{RESULTS}/figures/{figure_name}.png", caption=f"../report/{figure_rule}.rst", **IN_FIGURES),
            csv=f"{RESULTS}/figures/{figure_name}.csv",
        log:
            f"{RESULTS}/logs/{figure_rule}.log",
        conda:
            "../../envs/membound.yaml"
        params:
            module=plot_module,
            precisions=config["precisions"],
            options=plot_options,
            interval=CLAIMS_INTERVAL,  # the claims' interval, which Figures 6 and 7 draw: their captions name it
        script:
            "../../scripts/figure.py"


# Figures 2, 6, 7, 8 and the claims across devices, the paper's stacked layout: under the reference
# profile every GPU it renders (part of its `all`); under any other profile every profile whose files
# exist (render each profile first, then `snakemake --profile <any> compare`). Figures 6, 7 and 8: a
# figure per precision, a row of panels per GPU (the paper's layout; at most about 3000 px tall).
COMPARED = {
    "fig2_roofline": "figures/fig2_roofline.csv",
    "fig6_scale": "figures/fig6_scale.csv",
    "fig7_spmv": "figures/fig7_spmv.csv",
    "fig8_stencil": "figures/fig8_stencil.csv",
    "claims": "claims.json",
}
STACKED = [f"{key}_{p}" for key in ("fig6_scale", "fig7_spmv", "fig8_stencil") for p in config["precisions"]]


rule compare:
    input:
        **{key: compared(name) for key, name in COMPARED.items()},
        code=code("scripts/compare.py"),
    output:
        **{f"{name}_pdf": f"results/compare/{name}.pdf" for name in ["fig2_roofline", *STACKED]},
        **{
            f"{name}_png": report(
                f"results/compare/{name}.png",
                caption=f"../report/compare_{name.rsplit('_', 1)[0] if name in STACKED else name}.rst",
                **IN_COMPARED_FIGURES,
            )
            for name in ["fig2_roofline", *STACKED]
        },
        claims=[
            "results/compare/claims.csv",
            report("results/compare/claims.md", caption="../report/compare_claims.rst", **IN_COMPARED_CLAIMS),
        ],
    log:
        "results/compare/compare.log",
    conda:
        "../../envs/membound.yaml"
    params:
        precisions=config["precisions"],
    script:
        "../../scripts/compare.py"
