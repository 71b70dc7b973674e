"""The docs site's nbdev processing (every notebook's `show_doc` cells run, signatures expanded) with and without `memo_toml`.

nbdev looks its configuration up for nearly every cell it processes and parses `pyproject.toml` twice per lookup;
`checkeval.tooling.site.process_notebooks` runs it inside `memo_toml`, which parses each distinct text once. The two modes run the
whole processing (`force=True`, into the checkout's `_proc/`, as `make docs` does) in fresh child processes, so each pays
the same imports: the baseline with `memo_toml` replaced by a context that does nothing, then with it, `--repeats` times
each, alternating. Reported: the best wall and CPU seconds of each, their ratio, and whether the processed notebooks are
the same (cell ids and execution times left out: nbdev draws new ids on every run). The last line is one JSON object.

    python bench/docs_processing.py [--repeats 1]
"""
from __future__ import annotations
import argparse, json, os, platform, resource, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = ("import contextlib, os, sys, checkeval.tooling.site as s\n"
         "if sys.argv[1] == 'off': s.memo_toml = contextlib.nullcontext\n"
         "s.process_notebooks(force=True)\n"
         "sys.stdout.flush(); sys.stderr.flush(); os._exit(0)\n")   # as `process_in_child`: without the shells' exit handlers


def run(mode:str) -> tuple[float, float]:
    "One processing of the whole site in a child process: (wall s, CPU s of the child)."
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, '-c', CHILD, mode], cwd=ROOT, check=True, capture_output=True,
                   env={**os.environ, 'OMP_NUM_THREADS': '1', 'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1'})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def processed(proc:Path) -> dict:
    "The processed notebooks of `proc` without what changes on every run (cell ids, execution times)."
    out = {}
    for p in sorted(proc.rglob('*.ipynb')):
        nb = json.loads(p.read_text())
        for c in nb['cells']: c.pop('id', None); c.get('metadata', {}).pop('execution', None)
        out[p.relative_to(proc).as_posix()] = nb
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--repeats', type=int, default=1)
    a = ap.parse_args()
    from nbdev.config import get_config
    proc = Path(get_config(path=ROOT).config_path)/'_proc'
    times, seen = {'off': [], 'on': []}, {}
    for _ in range(a.repeats):
        for mode in ('off', 'on'):
            times[mode].append(run(mode))
            seen[mode] = processed(proc)
    best = {m: min(v) for m, v in times.items()}
    same = seen['off'] == seen['on']
    print(f"without memo_toml: {best['off'][0]:.1f} s wall, {best['off'][1]:.1f} s CPU; with it: {best['on'][0]:.1f} s wall, "
          f"{best['on'][1]:.1f} s CPU ({len(seen['on'])} notebooks)")
    print(json.dumps(dict(bench='docs_processing', machine=platform.processor() or platform.machine(), notebooks=len(seen['on']),
                          repeats=a.repeats, baseline_s=round(best['off'][0], 2), baseline_cpu_s=round(best['off'][1], 2),
                          memo_s=round(best['on'][0], 2), memo_cpu_s=round(best['on'][1], 2),
                          ratio=round(best['off'][0] / best['on'][0], 2), same_output=same)))
    if not same: sys.exit('the processed notebooks differ')


if __name__ == '__main__': main()
