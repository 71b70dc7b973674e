"""Greedy requests whose prompts share nothing (ELLIPSE's think-aloud, the CoT judge baseline on Arena-Hard) on the `hf` backend.

Such requests used to go to `model.generate` in left-padded batches: every row was computed to the batch's longest
prompt, and the KV cache was concatenated at each step. Now each is prefilled on its own, unpadded, and the rows are
decoded together on a preallocated cache (`HFJudge._prefill_one`, `_decode_rows`); `prefix_reuse=False` keeps the
padded `model.generate` path, which this bench runs as the baseline in the same process on the same requests (cache off,
alternating, best of `--repeats`). The model is the random Llama of `bench/prefix_reuse.py` (built locally; nothing is
downloaded); prompt lengths are spread from `--min-words` to `--max-words`. Reported: seconds for both paths, their
`ratio`, tokens computed and how many replies are the same text. The last line is one JSON object.

    python bench/unshared_prompts.py [--requests 12] [--min-words 200] [--max-words 1600] [--new 48] [--repeats 2]
"""
from __future__ import annotations
import argparse, json, math, os, platform, random, sys, tempfile, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from prefix_reuse import build_model, model_options, set_threads   # the same random model as the shared-prefix bench


def make_requests(n:int, lo:int, hi:int, vocab:int, new:int, seed:int=0):
    "`n` requests, each a text of its own (lengths spread evenly from `lo` to `hi` words, shuffled), `new` tokens each."
    from checkeval.judges.types import JudgeRequest
    rng = random.Random(seed)
    lengths = [lo + (hi - lo)*k//max(n - 1, 1) for k in range(n)]
    rng.shuffle(lengths)
    text = lambda m: ' '.join(f'w{rng.randrange(100, vocab - 100)}' for _ in range(m))
    return [JudgeRequest(messages=[{'role': 'user', 'content': text(m)}], max_tokens=new) for m in lengths]


def run(judge, reqs):
    t0 = time.perf_counter()
    out = judge.generate(reqs)
    dt = time.perf_counter() - t0
    bad = [r.error for r in out if r.error]
    if bad: raise RuntimeError(f'{len(bad)} requests failed, e.g. {bad[0]}')
    return [r.text for r in out], dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--requests', type=int, default=12)
    ap.add_argument('--min-words', type=int, default=200)
    ap.add_argument('--max-words', type=int, default=1600)
    ap.add_argument('--new', type=int, default=48, help='new tokens per request')
    args = model_options(ap).parse_args(argv)
    torch = set_threads(args)
    from checkeval.judges import HFJudge
    with tempfile.TemporaryDirectory(prefix='unshared-bench-') as tmp:
        path = build_model(Path(tmp)/'model', args.vocab)
        reqs = make_requests(args.requests, args.min_words, args.max_words, args.vocab, args.new)
        judges = {mode: HFJudge(f'bench-{mode}', model_path=path, cache=False, progress=False, prefix_reuse=(mode == 'unpadded'),
                                max_batch_tokens=10**6) for mode in ('padded', 'unpadded')}
        for j in judges.values(): run(j, reqs[:2])          # load weights, warm up
        best, texts, groups = {}, {}, {}
        for _ in range(max(1, args.repeats)):
            for mode in ('padded', 'unpadded'):
                judges[mode].reset_prefix_stats()
                texts[mode], dt = run(judges[mode], reqs)
                best[mode], groups[mode] = min(best.get(mode, math.inf), dt), judges[mode].prefix_stats['groups']
        prompt = [len(judges['unpadded'].chat_ids(r.messages)) for r in reqs]
        same = sum(a == b for a, b in zip(texts['padded'], texts['unpadded']))
        res = dict(bench='unshared_prompts', backend='hf', model=f'random Llama: 4 layers, hidden 512, 8 heads, vocab {args.vocab}',
                   requests=len(reqs), prompt_tokens_min=min(prompt), prompt_tokens_max=max(prompt), new_tokens=args.new,
                   prefill_tokens_padded=len(reqs)*max(prompt), prefill_tokens_unpadded=sum(prompt), prefix_groups=groups['unpadded'],
                   seconds_padded=round(best['padded'], 3), seconds_unpadded=round(best['unpadded'], 3),
                   ratio=round(best['padded']/best['unpadded'], 2), same_text=same, torch=torch.__version__,
                   threads=torch.get_num_threads(), python=platform.python_version(), goal='ratio >= 1.3 and every text the same')
        res['goal_met'] = bool(res['ratio'] >= 1.3 and same == len(reqs))
        print(json.dumps(res))


if __name__ == '__main__':
    main()
