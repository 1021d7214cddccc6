"""Run a Python module or script in this process and print its peak memory to stderr.

``python peak.py -m depgraph analyze ...`` or ``python peak.py script.py args...``.
Peak is ``VmHWM`` from ``/proc/self/status``: the high-water mark of this process's own
address space, which starts afresh at exec (unlike ``ru_maxrss`` of a forked child).
"""

import runpy
import sys


def _hwm_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main() -> None:
    args = sys.argv[1:]
    code = 0
    try:
        if args[0] == "-m":
            sys.argv = [args[1], *args[2:]]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = args
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    sys.stdout.flush()
    print(f"PEAK_KB {_hwm_kb()}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
