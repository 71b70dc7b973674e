"""Replies held to a JSON schema on the `hf` backend with the built-in `smollm2` judge: the text the schema forces next is
fed to the model as a draft with the chosen token in one forward pass and kept as far as greedy decoding takes it
(`checkeval.judges.forced.jump_drafts`, `accept_draft`), against one step per token, the baseline, run in the same process
on the same requests (`jump_drafts` replaced by one that drafts nothing).

The requests are those of CheckEval (grouped yes/no questions), InteractEval (its released checklist), Check-Eval (its
checklist written by the judge, then answered) and SEAL (unit verdicts, 60 tokens a reply) on the
`--items` shortest summaries of SummEval's shortest article (`short_items` of tests/conftest.py), coherence, as the smollm2 tests run them,
each mode with a cache of its own, alternating, best of `--repeats`. Reported: seconds and the model's forward passes
during decoding for both modes, their ratios, and how many answers are the same (a drafted token is kept only where
greedy decoding would take it: every reply must be the same). The last line is one JSON object.

    python bench/forced_tokens.py [--items 1] [--repeats 1]
"""
from __future__ import annotations
import argparse, json, math, os, platform, sys, tempfile, time, warnings
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]/'tests'))
from conftest import short_items   # the items the smollm2 tests read


def run(judge, items, root):
    "Answers (method, item, question, reply, value) of CheckEval, InteractEval, Check-Eval and SEAL, seconds, decoding forward passes."
    from checkeval.runs import evaluate
    model, calls = judge._loaded()[0], [0]
    forward = model.forward
    def counted(*a, **kw):
        calls[0] += kw['input_ids'].shape[1] <= 64      # a decoding step (prefills are whole prompts)
        return forward(*a, **kw)
    model.forward, answers, t0 = counted, [], time.perf_counter()
    try:
        for method, options in [('checkeval', {}), ('interacteval', {'sample_unit': 'items'}), ('keypoint', {'max_tokens': 250}),
                                ('seal', {'max_tokens': 60})]:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                _, res = evaluate(method, 'summeval', judge, items=items, dimensions=['coherence'], seed=0, root=root/method, options=options)
            answers += [(method, a.item_id, a.question_id, a.raw_text, a.value) for a in res.answers]
    finally: del model.forward
    return answers, time.perf_counter() - t0, calls[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=1)
    ap.add_argument('--repeats', type=int, default=1)
    args = ap.parse_args(argv)
    import torch
    import checkeval.judges.hf as hf
    from checkeval.judges import get_judge
    from checkeval.judges.builtin import ModelFileError
    torch.set_num_threads(1)
    items, drafts = short_items(args.items), hf.jump_drafts
    modes = {'one_step_per_token': lambda held, new, rooms: [[] for _ in new], 'drafts': drafts}
    best, out, calls = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix='forced-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode, fn in modes.items():
                try: judge = get_judge('smollm2', cache=Path(tmp)/f'{mode}-{rep}.sqlite', progress=False, lookup_tokens=0)   # schema drafts only
                except ModelFileError as e: raise SystemExit(f'smollm2 is not installed: {e}')
                hf.jump_drafts = fn
                try: out[mode], dt, calls[mode] = run(judge, items, Path(tmp)/f'{mode}-{rep}')
                finally: hf.jump_drafts = drafts
                best[mode] = min(best.get(mode, math.inf), dt)
    a, b = out['one_step_per_token'], out['drafts']
    res = dict(bench='forced_tokens', backend='hf', model='smollm2 (SmolLM2-135M-Instruct, fp32, CPU)', items=len(items),
               answers=len(b), same_answers=sum(x == y for x, y in zip(a, b)) if len(a) == len(b) else 0,
               seconds_one_step=round(best['one_step_per_token'], 2), seconds_drafts=round(best['drafts'], 2),
               ratio=round(best['one_step_per_token']/best['drafts'], 2),
               decode_forwards_one_step=calls['one_step_per_token'], decode_forwards_drafts=calls['drafts'],
               torch=torch.__version__, threads=torch.get_num_threads(), python=platform.python_version(),
               goal='fewer decoding forward passes, every answer the same')
    res['goal_met'] = bool(res['decode_forwards_drafts'] < res['decode_forwards_one_step'] and res['same_answers'] == res['answers'])
    print(json.dumps(res))


if __name__ == '__main__':
    main()
