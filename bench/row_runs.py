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
import argparse, json, math, os, platform, sys, tempfile, time, warnings
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FORMS = [('p_yes', {'granularity': 'question', 'answer': 'choices'}), ('grouped', {})]


def run(judge, items, root):
    "Answers (form, item, question, reply, value, P(yes)) of CheckEval's two forms and the seconds they took."
    from checkeval.runs import evaluate
    answers, t0 = [], time.perf_counter()
    for form, options in FORMS:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            _, res = evaluate('checkeval', 'summeval', judge, items=items, dimensions=['coherence'], seed=0, root=root/form, options=options)
        answers += [(form, a.item_id, a.question_id, a.raw_text, a.value, a.p_yes) for a in res.answers]
    return answers, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=2)
    ap.add_argument('--repeats', type=int, default=1)
    args = ap.parse_args(argv)
    import torch
    from checkeval.judges import get_judge
    from _smollm2 import summeval_sample
    items = summeval_sample(args.items)
    best, out, cols = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix='row-runs-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode, on in (('one_forward', False), ('row_runs', True)):
                judge = get_judge('smollm2', cache=Path(tmp)/f'{mode}-{rep}.sqlite', progress=False, prefix_store=False, row_runs=on)
                out[mode], dt = run(judge, items, Path(tmp)/f'{mode}-{rep}')
                best[mode], cols[mode] = min(best.get(mode, math.inf), dt), judge.prefix_stats['tokens_computed']
    a, b = out['one_forward'], out['row_runs']
    same = sum(x[:5] == y[:5] for x, y in zip(a, b)) if len(a) == len(b) else 0
    dp = max((abs(x[5] - y[5]) for x, y in zip(a, b) if x[5] is not None and y[5] is not None), default=None)
    res = dict(bench='row_runs', backend='hf', model='smollm2 (SmolLM2-135M-Instruct, fp32, CPU)', items=len(items),
               answers=len(b), same_answers=same, answers_differ=len(b) - same, max_p_yes_difference=dp,
               seconds_baseline=round(best['one_forward'], 2), seconds_row_runs=round(best['row_runs'], 2),
               ratio=round(best['one_forward']/best['row_runs'], 3),
               tokens_computed_baseline=cols['one_forward'], tokens_computed_row_runs=cols['row_runs'],
               torch=torch.__version__, threads=torch.get_num_threads(), python=platform.python_version(),
               goal='fewer columns computed and less time with the rows in runs')
    res['goal_met'] = bool(res['ratio'] > 1 and cols['row_runs'] < cols['one_forward'])
    print(json.dumps(res))


if __name__ == '__main__':
    main()
