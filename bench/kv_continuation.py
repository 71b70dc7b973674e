"""RocketEval's multi-turn grading (w/o independent grading, Table 8) on the `hf` backend: kept KV caches vs every turn computed whole.

Each response's checklist questions are asked one after the other in one conversation, so turn k's prompt is turn k-1's
prompt, its Yes/No answer and the next question. With `keep_kv_mb` > 0 (the default) the judge keeps the KV cache of the
prompts it scored and a later prompt that continues one of them computes only its new tokens; with `keep_kv_mb=0` every
turn is computed whole. The model is the random Llama of `bench/prefix_reuse.py` (4 layers, hidden 512, 8 heads, 32k
word-level vocabulary, built locally; nothing is downloaded), the requests are `checkeval.methods.rocketeval.method.grade_items`'s
own (`independent=False`). Both modes run in this process on the same items (cache off), alternating, best of `--repeats`.
Reported: seconds for both, their `ratio`, and the largest absolute difference of P(Yes) between the modes. The last line
is one JSON object.

    python bench/kv_continuation.py [--responses 12] [--items 8] [--words 600] [--repeats 2]
"""
from __future__ import annotations
import argparse, json, math, os, platform, sys, tempfile, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from prefix_reuse import build_model, make_workload, model_options, set_threads   # the same model and workload as the shared-prefix bench


def grade(judge, items, checklists):
    "Multi-turn grading of every item; returns ({(item, question): P(Yes)}, seconds)."
    from checkeval.methods.rocketeval.method import grade_items
    t0 = time.perf_counter()
    answers = grade_items(items, checklists, judge, independent=False)
    dt = time.perf_counter() - t0
    bad = [a.status for a in answers if a.status != 'ok']
    if bad: raise RuntimeError(f'{len(bad)} answers failed, e.g. {bad[0]}')
    return {(a.item_id, a.question_id): a.p_yes for a in answers}, dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument("--responses", type=int, default=12)
    ap.add_argument('--items', type=int, default=8)
    ap.add_argument('--words', type=int, default=600)
    args = model_options(ap).parse_args(argv)
    torch = set_threads(args)
    from checkeval.judges import HFJudge
    with tempfile.TemporaryDirectory(prefix='kv-bench-') as tmp:
        path = build_model(Path(tmp)/'model', args.vocab)
        items, checklists = make_workload(args.responses, args.items, args.words, args.vocab)
        judges = {mode: HFJudge(f'bench-{mode}', model_path=path, cache=False, progress=False, keep_kv_mb=(0 if mode == 'whole' else 4096))
                  for mode in ('whole', 'kept')}
        for j in judges.values(): grade(j, items[:2], checklists)          # load weights, warm up
        best, scores, stats = {}, {}, {}
        for _ in range(max(1, args.repeats)):
            for mode in ('whole', 'kept'):
                judges[mode]._kept.clear(); judges[mode].reset_prefix_stats()
                scores[mode], dt = grade(judges[mode], items, checklists)
                best[mode], stats[mode] = min(best.get(mode, math.inf), dt), dict(judges[mode].prefix_stats)
        diff = max(abs(scores['kept'][k] - scores['whole'][k]) for k in scores['whole'])
        res = dict(bench='kv_continuation', backend='hf', model=f'random Llama: 4 layers, hidden 512, 8 heads, vocab {args.vocab}',
                   responses=args.responses, turns_per_conversation=args.items, requests=len(scores['whole']),
                   seconds_whole=round(best['whole'], 3), seconds_kept=round(best['kept'], 3), ratio=round(best['whole']/best['kept'], 2),
                   tokens_computed_whole=stats['whole']['tokens_computed'], tokens_computed_kept=stats['kept']['tokens_computed'],
                   continued=stats['kept']['continued'], max_abs_diff_p_yes=diff, torch=torch.__version__, threads=torch.get_num_threads(),
                   python=platform.python_version(), goal='ratio >= 2 and max_abs_diff_p_yes <= 1e-4')
        res['goal_met'] = bool(res['ratio'] >= 2 and diff <= 1e-4)
        print(json.dumps(res))


if __name__ == '__main__':
    main()
