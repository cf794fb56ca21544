"""Are two results.json equal in every number? Run ids, elapsed times, the data files' paths and the digest over
them are left out (two source trees hold the demo files at two paths).

    python bench/compare_results.py A/results.json B/results.json
"""
import json
import sys

VOLATILE = {"run_id", "elapsed_s", "seconds", "started", "finished", "created", "timestamp", "wall_s", "path",
            "digest"}


def strip(x, path=""):
    if isinstance(x, dict):
        return {k: strip(v, f"{path}.{k}") for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [strip(v, path) for v in x]
    return x


a, b = (json.load(open(p)) for p in sys.argv[1:3])
sa, sb = strip(a), strip(b)
if sa == sb:
    print("results.json identical except", sorted({k for k in VOLATILE if k in json.dumps(a)}))
else:
    def diff(x, y, p=""):
        if type(x) is not type(y):
            print("DIFF", p, str(x)[:80], str(y)[:80])
            return
        if isinstance(x, dict):
            for k in set(x) | set(y):
                if k not in x or k not in y:
                    print("KEY", p, k)
                else:
                    diff(x[k], y[k], f"{p}.{k}")
        elif isinstance(x, list):
            if len(x) != len(y):
                print("LEN", p)
            for i, (u, v) in enumerate(zip(x, y)):
                diff(u, v, f"{p}[{i}]")
        elif x != y:
            print("DIFF", p, str(x)[:80], str(y)[:80])
    diff(sa, sb)
