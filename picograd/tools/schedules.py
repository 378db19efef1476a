"""`python -m picograd.tools.schedules`: the schedules BEAM search stored, listed and shared.

    python -m picograd.tools.schedules list             kernel, speed-up, schedule, per line
    python -m picograd.tools.schedules export FILE      every stored schedule to a JSON file
    python -m picograd.tools.schedules import FILE      ... and back (on another machine)
    python -m picograd.tools.schedules clear            forget them all

A stored schedule is used by every later compile of the same kernel on the same device and
toolchain (picograd/compiler/beam/store.py); `PG_BEAM_CACHE=0` ignores them without
deleting them. An imported schedule is checked when it is applied like any other: one
whose actions do not apply to the kernel is searched again.
"""

from __future__ import annotations

import argparse
import sys

from picograd.compiler.beam import store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m picograd.tools.schedules",
                                     description="BEAM's stored schedules")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="one line per stored schedule")
    for name in ("export", "import"):
        commands.add_parser(name, help=f"{name} them as JSON").add_argument("file")
    commands.add_parser("clear", help="forget every stored schedule")
    args = parser.parse_args(argv)
    if args.command == "list":
        for tuned in store.entries():
            print(f"{tuned.kernel}\tx{tuned.speedup:.2f}\t{tuned.seconds * 1e6:.1f} us\t"
                  f"{tuned.schedule or '(none)'}\t(heuristic: {tuned.heuristic or '(none)'})")
    elif args.command == "export":
        try:
            print(f"exported {store.export(args.file)} schedules to {args.file}")
        except OSError as e:
            print(f"schedules: error: cannot write {args.file}: {e}", file=sys.stderr)
            return 1
    elif args.command == "import":
        try:
            print(f"imported {store.import_file(args.file)} schedules from {args.file}")
        except store.ScheduleFileError as e:
            print(f"schedules: error: {e}", file=sys.stderr)
            return 1
    else:
        print(f"forgot {store.clear()} schedules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
