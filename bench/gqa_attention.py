"""Attention with grouped key heads on the `hf` backend, the built-in `smollm2` judge on a CPU: `sdpa_gqa`
(`checkeval.judges.attention`: PyTorch's SDPA kernel handed each of the 3 key/value heads once) against transformers' own
SDPA attention, the baseline, which copies each key/value head for the 3 query heads that read it (`repeat_kv`) on every
layer of every forward that reads more than one new token per row. Both run in the same process on the same requests.

The requests are CheckEval's on the `--items` first summaries of SummEval (sample: whole documents, seed 0), coherence, in
its two forms: one question per request with the reply held to yes/no (P(yes): prefills only) and the grouped questions with
replies held to a JSON schema (prefills and decoding). Each mode has a cache of its own; the modes alternate, best of
`--repeats`. Reported: seconds per mode, their ratio, and how many answers are the same (the kernel reads the same keys:
every answer should be). The last line is one JSON object.

    python bench/gqa_attention.py [--items 2] [--repeats 1]
"""
from __future__ import annotations
import argparse, json, math, os, platform, sys, tempfile, time, warnings
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def run(judge, items, root):
    "Answers (form, item, question, reply, value, P(yes)) of CheckEval's two forms and the seconds they took."
    from checkeval.runs import evaluate
    answers, t0 = [], time.perf_counter()
    for form, options in [('p_yes', {'granularity': 'question', 'answer': 'choices'}), ('grouped', {})]:
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
    from checkeval.data import load_benchmark
    from checkeval.judges import get_judge
    from checkeval.judges.builtin import ModelFileError
    from checkeval.runs import select_items
    torch.set_num_threads(1)
    items = select_items(load_benchmark('summeval'), args.items, 'groups', 0)
    best, out = {}, {}
    with tempfile.TemporaryDirectory(prefix='gqa-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode in ('sdpa', 'sdpa_gqa'):
                try: judge = get_judge('smollm2', cache=Path(tmp)/f'{mode}-{rep}.sqlite', progress=False)
                except ModelFileError as e: raise SystemExit(f'smollm2 is not installed: {e}')
                judge._loaded()[0].set_attn_implementation(mode)     # the one model of the process: set before each mode
                out[mode], dt = run(judge, items, Path(tmp)/f'{mode}-{rep}')
                best[mode] = min(best.get(mode, math.inf), dt)
    a, b = out['sdpa'], out['sdpa_gqa']
    same = sum(x[:5] == y[:5] and (x[5] is None) == (y[5] is None) and (x[5] is None or abs(x[5] - y[5]) < 1e-5) for x, y in zip(a, b))
    res = dict(bench='gqa_attention', backend='hf', model='smollm2 (SmolLM2-135M-Instruct, fp32, CPU)', items=len(items),
               answers=len(b), same_answers=same if len(a) == len(b) else 0,
               seconds_sdpa=round(best['sdpa'], 2), seconds_sdpa_gqa=round(best['sdpa_gqa'], 2),
               ratio=round(best['sdpa']/best['sdpa_gqa'], 2), cpu=platform.processor() or platform.machine(),
               torch=torch.__version__, threads=torch.get_num_threads(), python=platform.python_version(),
               goal='faster than transformers\' SDPA attention, every answer the same')
    res['goal_met'] = bool(res['ratio'] > 1 and res['same_answers'] == res['answers'])
    print(json.dumps(res))


if __name__ == '__main__':
    main()
