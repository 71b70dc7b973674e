"""A group's rows after its shared prefix on the `hf` backend with the built-in `smollm2` judge: computed in runs of alike
length, one forward each (`checkeval.judges.planning.row_runs`, the judge's default), against one forward for all of them,
each row padded to the longest (`row_runs=False`, the baseline), run in the same process on the same requests.

The requests are CheckEval's on the `--items` first summaries of SummEval (sample: whole documents, seed 0), coherence, in
its P(yes) form (one question per request, the reply held to yes/no: prefills only, the questions' lengths differing) and
its grouped form (replies held to a JSON schema); each mode with a judge and a cache of its own and no prefix store,
alternating, best of `--repeats`. Reported: seconds of both modes, their ratio, the columns the forwards computed, how many
answers are the same and the largest difference in P(yes). A row computed beside other rows, padded otherwise, rounds its
floats otherwise in the last bits (the attention's blocks fall elsewhere), so P(yes) may move there and a nearly tied answer
could turn: both are reported, not required to be zero. The last line is one JSON object.

    python bench/row_runs.py [--items 2] [--repeats 1]
"""
from __future__ import annotations
import json, math, os, sys, tempfile
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None):
    from _smollm2 import bench_args, checkeval_forms, smollm2_facts, summeval_sample
    args = bench_args(__doc__, argv, items=2)
    from checkeval.judges import get_judge
    items = summeval_sample(args.items)
    best, out, cols = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix='row-runs-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode, on in (('one_forward', False), ('row_runs', True)):
                judge = get_judge('smollm2', cache=Path(tmp)/f'{mode}-{rep}.sqlite', progress=False, prefix_store=False, row_runs=on)
                out[mode], dt = checkeval_forms(judge, items, Path(tmp)/f'{mode}-{rep}')
                best[mode], cols[mode] = min(best.get(mode, math.inf), dt), judge.prefix_stats['tokens_computed']
    a, b = out['one_forward'], out['row_runs']
    same = sum(x[:5] == y[:5] for x, y in zip(a, b)) if len(a) == len(b) else 0
    dp = max((abs(x[5] - y[5]) for x, y in zip(a, b) if x[5] is not None and y[5] is not None), default=None)
    res = dict(bench='row_runs', **smollm2_facts(), items=len(items),
               answers=len(b), same_answers=same, answers_differ=len(b) - same, max_p_yes_difference=dp,
               seconds_baseline=round(best['one_forward'], 2), seconds_row_runs=round(best['row_runs'], 2),
               ratio=round(best['one_forward']/best['row_runs'], 3),
               tokens_computed_baseline=cols['one_forward'], tokens_computed_row_runs=cols['row_runs'],
               goal='fewer columns computed and less time with the rows in runs')
    res['goal_met'] = bool(res['ratio'] > 1 and cols['row_runs'] < cols['one_forward'])
    print(json.dumps(res))


if __name__ == '__main__':
    main()
