"""python -m membound.specs new | compare: a spec and profile from this GPU, and two specs side by side.

new [--report FILE] [--name NAME] [--force]: query this node's first GPU (or read a saved report, JSON:
    membound.run.probe's raw form), write config/gpus/<name>.yaml and profiles/<name>/ and print what to
    check. --if-missing (make run): print the name of the profile that describes this machine (cpu
    where no GPU answers: membound.run.detect) and write nothing; where none does, write one, say so in
    one line on stderr, and print its name.
compare SPEC OTHER [--within F]: every number of two specs (profile names or YAML paths), the relative
    difference, and those beyond F (default 0.02); exit status 1 where any is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from membound import specs
from membound.run import config, detect, probe
from membound.specs import write


def spec_at(name: str) -> dict:
    """A spec by profile name (config/gpus/<name>.yaml) or path."""
    return yaml.safe_load(Path(name).read_text()) if name.endswith((".yaml", ".yml")) else config.load_gpu(name)


def review(spec: dict, name: str) -> str:
    """What `new` wrote and what to check: each number with its source."""
    src = spec["sources"]
    lines = [f"wrote config/gpus/{name}.yaml and profiles/{name}/ for this {spec['name']} ({spec['arch']}, "
             f"{spec['sm_count']} {'CU' if spec['vendor'] == 'amd' else 'SM'}s). Check each number against your "
             "card's datasheet; its source follows it:",
             f"  bandwidth {spec['memory_bandwidth_TBs']:g} TB/s: {src['memory_bandwidth_TBs']}",
             f"  L2 {spec['l2_MB']:g} MB: {src['l2_MB']}", f"  memory {spec['memory_GB']:g} GB: {src['memory_GB']}"]
    for precision, units in spec["peak_TFLOPs"].items():
        for unit, value in units.items():
            why = src["peak_TFLOPs"][precision][unit]
            shown = f"{value:g} TFLOP/s" if value is not None else "ABSENT" if why.startswith("absent") else "none"
            lines.append(f"  {precision} {unit} {shown}: {why}")
    lines.append(f"Then run it (snakemake --profile profiles/{name} all) and keep it: "
                 f"git add config/gpus/{name}.yaml profiles/{name}")
    return "\n".join(lines)


def new(args) -> None:
    if not args.report and not detect.device_names():
        if args.if_missing:
            print("cpu")    # no GPU answers: the cpu profile (membound.run.detect)
            return
        raise SystemExit("membound: no GPU answers here (nvidia-smi, rocm-smi): run this on the GPU's node, or "
                         "give a saved report: --report FILE")
    raw = json.loads(Path(args.report).read_text()) if args.report else probe.query()
    dev = probe.device(raw)
    if args.if_missing and (found := detect.profile_of(dev)):
        print(found)
        return
    spec = specs.generate(dev, probe.archs())
    name = args.name or probe.new_name(dev.name)
    write.write(spec, name, force=args.force)
    if args.if_missing:
        print(f"membound: no profile describes this {dev.name}: wrote config/gpus/{name}.yaml and profiles/{name}/ "
              "from the device; running it (review its sources: README, Your GPU)", file=sys.stderr)
        print(name)
    else:
        print(review(spec, name))


def compare(args) -> int:
    rows = specs.compared(spec_at(args.spec), spec_at(args.other))
    print(f"{'quantity':34} {args.spec:>16} {args.other:>16}  difference")
    beyond = 0
    for key, a, b, diff in rows:
        if a is None and b is None:
            continue
        far = diff is None or diff > args.within
        beyond += far
        shown = "only one gives it" if diff is None else f"{diff:.1%}" + (f"  beyond {args.within:.0%}" if far else "")
        print(f"{key:34} {'-' if a is None else f'{a:g}':>16} {'-' if b is None else f'{b:g}':>16}  {shown}")
    print(f"{beyond} of the numbers differ beyond {args.within:.0%}" if beyond else f"all within {args.within:.0%}")
    return 1 if beyond else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m membound.specs", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    n = sub.add_parser("new", help="write this GPU's spec and profile")
    n.add_argument("--report", help="a saved device report (JSON) in place of querying this GPU")
    n.add_argument("--name", help="the profile name (default: from the device's name)")
    n.add_argument("--force", action="store_true", help="rewrite an existing spec and profile of that name")
    n.add_argument("--if-missing", action="store_true", help="only where no profile describes this GPU (make run)")
    c = sub.add_parser("compare", help="two specs number by number")
    c.add_argument("spec")
    c.add_argument("other")
    c.add_argument("--within", type=float, default=0.02)
    args = parser.parse_args(argv)
    try:
        return compare(args) if args.command == "compare" else new(args) or 0
    except (probe.QueryError, specs.SpecError, config.ConfigError, FileExistsError, OSError, ValueError) as err:
        raise SystemExit(f"membound: {err}") from None


if __name__ == "__main__":
    sys.exit(main())
