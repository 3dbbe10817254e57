"""`python -m membound.ae verify [folder]`: an unpacked archive checked offline (membound.run.verify);
`python -m membound.ae reproduced <run> <reference>`: a run against the committed reference
(membound.analysis.reproduced)."""

import sys

from membound.analysis import reproduced
from membound.run import verify

COMMANDS = {"verify": verify.main, "reproduced": reproduced.main}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m membound.ae {{{','.join(COMMANDS)}}} ... (--help for each)", file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
